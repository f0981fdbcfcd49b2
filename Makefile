# transformer.c — thin wrapper around CMake (docs/BUILDING.md, docs/TESTING.md).
#   make              builds build/tfm (tuned for this CPU: -march=native)
#   make demo         trains and evaluates the English-Spanish translator
#   make test         installs what is missing (packages, the corpus), builds and runs every test
#   make test-fast    builds and runs the fast tier only (ctest -L fast, under a minute)
#   make test-asan    the whole suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make portable     build-portable/tfm for any x86-64 CPU (no AVX), checked with objdump
#   make fuzz         every libFuzzer target for FUZZ_SECONDS (default 60) each, ASan + UBSan (clang)
#   make bench        tfm against PyTorch and CTranslate2 side by side, one table (docs/BENCH.md)
#   make pe-study     the position-encoding study: every encoding trained and tested past its training lengths (docs/STUDY.md)
#   make install      libtfm.so/.a, headers, tfm.pc, the CMake package and tfm under PREFIX (docs/API.md)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CORPUS := data/bible-en-es
CORPUS_PKGS := diatheke sword-text-web sword-text-sparv python3

.PHONY: all deps corpus demo test test-fast test-asan portable fuzz bench pe-study install clean

all: build/tfm

deps:
	@scripts/install-deps

# The corpus for the slow tests (they SKIP without it): the packages get-corpus needs, then the
# corpus itself unless it is already there.
corpus: deps
	@scripts/install-deps $(CORPUS_PKGS)
	@[ -s $(CORPUS)/train.en ] && [ -s $(CORPUS)/test.es ] || scripts/get-corpus $(CORPUS)

build/Makefile: CMakeLists.txt
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release

build/tfm: FORCE build/Makefile
	cmake --build build -j $(JOBS)

# The main job: corpus, training for DEMO_MINUTES (default 20), test BLEU and sample translations.
demo:
	@scripts/demo

test: deps corpus
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
	cmake --build build -j $(JOBS)
	cd build && ctest --output-on-failure

test-fast: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
	cmake --build build -j $(JOBS)
	cd build && ctest -L fast --output-on-failure

test-asan: deps corpus
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTFM_SANITIZE=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure

portable: deps
	cmake -S . -B build-portable -DCMAKE_BUILD_TYPE=Release -DTFM_NATIVE=OFF
	cmake --build build-portable -j $(JOBS)
	cd build-portable && ctest -L portable --output-on-failure

# Fuzzing (docs/FUZZING.md): clang, libFuzzer and clang's OpenMP from Debian, an instrumented build in
# build-fuzz/, then fuzz/run.sh: each target FUZZ_SECONDS from its seed corpus; fails on a finding.
FUZZ_SECONDS ?= 60
FUZZ_PKGS := clang libclang-rt-dev libomp-dev
fuzz: deps
	@scripts/install-deps $(FUZZ_PKGS)
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTFM_FUZZ=ON
	cmake --build build-fuzz -j $(JOBS) --target fuzzers
	fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# The benchmark table (docs/BENCH.md); BENCH_FLAGS go to bench/bench.sh (e.g. --model M --reps 10).
bench: build/tfm
	@bench/bench.sh $(BENCH_FLAGS)

# The position-encoding study (docs/STUDY.md): hours on 2 cores; resumable (run it again to go on).
# PE_STUDY_FLAGS go to study/pe_study.sh (e.g. -s 1000 -l 800 -o out/pe-study-short).
pe-study: corpus build/tfm
	@study/pe_study.sh $(PE_STUDY_FLAGS)

# Install the library, its headers, tfm.pc, the CMake package and the tool (docs/API.md). The
# build is tuned for this CPU unless TFM_NATIVE=OFF (make install TFM_NATIVE=OFF for other machines).
PREFIX ?= /usr/local
TFM_NATIVE ?= ON
install: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTFM_NATIVE=$(TFM_NATIVE)
	cmake --build build -j $(JOBS)
	cmake --install build --prefix $(PREFIX)
	@case "$(PREFIX)" in /usr|/usr/local) [ "$$(id -u)" -ne 0 ] || ldconfig ;; esac # the linker's cache, for system prefixes only

clean:
	rm -rf build build-asan build-portable build-fuzz out

FORCE:
