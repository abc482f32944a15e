#pragma once
// The in-tree plugin registry: every implemented upstream plugin under its upstream name.

#include "framework/registry.h"

namespace kubesched::plugins {

//! Registers each in-tree plugin's factory under its upstream name (see names.h). Registering
//! into a registry that already holds one of these names is a programming error and aborts.
void RegisterInTreePlugins(framework::Registry& registry);

}  // namespace kubesched::plugins
