#include "cmd/commands.h"

int main(int argc, char** argv) { return kubesched::cmd::Main(argc, argv); }
