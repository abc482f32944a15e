// A plugin library whose registration throws: kubesched must refuse it with the exception's message.
#include <stdexcept>

#include "sdk/plugin.h"

KUBESCHED_PLUGIN_LIBRARY(registry) { throw std::runtime_error("this library cannot register today"); }
