// magnetoc: the Magneto compiler's command line (compile, check, bench). Everything lives in the
// library (src/driver/cli.cpp) so that tests can drive the same code.
#include "magneto/driver/cli.h"

int main(int argc, char** argv) { return magneto::driver::runCli(argc, argv); }
