// Prints the batch-size optimizer's generator draws for numpy_parity_test.py:
// `rng_dump SEED` or `rng_dump -` (a numpy state JSON on stdin). Lines: the
// state, 7 permutations (sizes 1..7), N(-100, 3.5) draws, the final state.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

#include "zeus/bso/pcg64.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s SEED|-\n", argv[0]);
        return 2;
    }
    const std::string arg = argv[1];
    auto rng = arg == "-" ? zeus::bso::Pcg64::from_state_json(std::string(std::istreambuf_iterator<char>(std::cin), {}))
                          : zeus::bso::Pcg64::from_seed(std::stoull(arg));
    std::printf("%s\n", rng.state_json().c_str());
    for (std::size_t n = 1; n <= 7; ++n) {
        for (auto v : rng.permutation(n)) std::printf("%zu ", v);
        std::printf("\n");
    }
    for (int i = 0; i < 20000; ++i) std::printf("%.17g\n", rng.normal(-100.0, 3.5));
    std::printf("%s\n", rng.state_json().c_str());
    return 0;
}
