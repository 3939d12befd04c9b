// vperf: the whole program is the CLI; every command lives in src/cli/.
#include <iostream>

#include "cli/app.h"

int main(int argc, char** argv) { return vperf::cli::run(argc, argv, std::cout, std::cerr); }
