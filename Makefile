# transformer.c — thin wrapper around CMake. `make` builds build/tfm; `make test` installs what is
# missing, builds and runs the whole test suite; `make test-asan` does the same under
# AddressSanitizer + UndefinedBehaviorSanitizer.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps test test-asan clean

all: build/tfm

deps:
	@scripts/install-deps

build/Makefile: CMakeLists.txt
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release

build/tfm: FORCE build/Makefile
	cmake --build build -j $(JOBS)

test: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
	cmake --build build -j $(JOBS)
	cd build && ctest --output-on-failure

test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTFM_SANITIZE=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure

clean:
	rm -rf build build-asan

FORCE:
