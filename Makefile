# transformer.c — thin wrapper around CMake. `make` builds build/tfm; `make demo` trains and
# evaluates the English-Spanish translator; `make test` installs what is missing, builds and runs
# the whole test suite; `make test-asan` does the same under AddressSanitizer +
# UndefinedBehaviorSanitizer.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps demo test test-asan clean

all: build/tfm

deps:
	@scripts/install-deps

build/Makefile: CMakeLists.txt
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release

build/tfm: FORCE build/Makefile
	cmake --build build -j $(JOBS)

# The main job: corpus, training for DEMO_MINUTES (default 20), test BLEU and sample translations.
demo:
	@scripts/demo

test: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
	cmake --build build -j $(JOBS)
	cd build && ctest --output-on-failure

test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTFM_SANITIZE=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure

clean:
	rm -rf build build-asan out

FORCE:
