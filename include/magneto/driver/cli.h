// The magnetoc command line: parses arguments, prints help, runs a command, maps errors to exit
// codes (0 ok, 1 bad input or check out of tolerance, 2 unsupported, 3 internal error, 4 a tool
// such as the C++ compiler or cmake failed). tools/magnetoc.cpp is just main() around runCli.
#pragma once

namespace magneto {
namespace driver {

int runCli(int argc, char** argv);

}  // namespace driver
}  // namespace magneto
