# The two commands of the README:
#   make run    install what is missing, build, start alsim-server and show that it serves
#   make test   install what is missing, build, check formatting, run every test
# Everything else here is a convenience for developers (see `make help`).

BUILD_DIR   ?= build
BUILD_TYPE  ?= Release
JOBS        ?= $(shell nproc)
LISTEN      ?= 127.0.0.1:50051
METRICS     ?= 127.0.0.1:9464
VIEWER      ?= 127.0.0.1:8080
CMAKE_FLAGS ?=
# make fuzz: libFuzzer targets built with clang into FUZZ_DIR (tests/fuzz, README "Fuzzing"); each
# runs FUZZ_SECONDS (0: replay the seeds and reproducers only); FUZZ_TARGETS picks some (default
# all). make test runs each for FUZZ_CI_SECONDS unless TEST_FUZZ=0 (make asan and tsan pass it).
FUZZ_DIR        ?= build-fuzz
FUZZ_SECONDS    ?= 60
FUZZ_CI_SECONDS ?= 15
# make fuzz-ci fixes libFuzzer's seed (a red CI run reproduces); make fuzz takes FUZZ_SEED if set.
FUZZ_CI_SEED    ?= 1
FUZZ_SEED       ?=
FUZZ_TARGETS    ?=
TEST_FUZZ       ?= 1

.PHONY: help run test deps configure build format format-check tidy asan tsan bench clean \
        fuzz fuzz-build fuzz-ci fuzz-corpus

help:
	@echo "make run           build, start alsim-server on $(LISTEN) (metrics $(METRICS)), run the demo client (DEMO=0 skips it)"
	@echo "                   and the browser viewer on http://$(VIEWER)/ (VIEWER=none skips it); Ctrl-C stops it"
	@echo "make test          build, check formatting, run all tests, then fuzz each target $(FUZZ_CI_SECONDS) s (make fuzz-ci)"
	@echo "make build         install dependencies and build into $(BUILD_DIR)/ (binaries in $(BUILD_DIR)/bin)"
	@echo "make format        reformat the sources with clang-format"
	@echo "make tidy          run clang-tidy over our sources"
	@echo "make asan | tsan   build and test with AddressSanitizer+UBSan | ThreadSanitizer"
	@echo "make bench         build and run the benchmarks"
	@echo "make fuzz          build the libFuzzer targets with clang into $(FUZZ_DIR)/ and run each for FUZZ_SECONDS=$(FUZZ_SECONDS)"
	@echo "                   (FUZZ_TARGETS='create_fuzzer step_fuzzer' picks some; crashes land in $(FUZZ_DIR)/artifacts/)"
	@echo "make fuzz-ci       the same, each target for $(FUZZ_CI_SECONDS) s (make test runs it after the tests)"
	@echo "make fuzz-corpus   rewrite the seed corpora in tests/fuzz/corpus/ (after a format change)"

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) > $(BUILD_DIR).configure.log 2>&1 \
	  || { cat $(BUILD_DIR).configure.log; exit 1; }

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build format-check
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)
	@if [ "$(TEST_FUZZ)" = 1 ]; then $(MAKE) --no-print-directory fuzz-ci; fi

run: build
	@scripts/run-server.sh $(BUILD_DIR)/bin $(LISTEN) $(METRICS) $(VIEWER)

format:
	@scripts/format.sh fix

format-check: deps
	@scripts/format.sh check

tidy: configure
	@scripts/tidy.sh $(BUILD_DIR)

asan:
	@$(MAKE) --no-print-directory test BUILD_DIR=build-asan BUILD_TYPE=Debug CMAKE_FLAGS="-DALSIM_SANITIZE=address -DALSIM_BUILD_BENCHMARKS=OFF" TEST_FUZZ=0

tsan:
	@$(MAKE) --no-print-directory test BUILD_DIR=build-tsan BUILD_TYPE=RelWithDebInfo CMAKE_FLAGS="-DALSIM_SANITIZE=thread -DALSIM_BUILD_BENCHMARKS=OFF" TEST_FUZZ=0

bench: build
	@for b in $(BUILD_DIR)/bin/*_bench; do echo "== $$b"; $$b; done

# One configure and build of the fuzz targets (and of alsim-scene-compiler, which they start).
fuzz-build: deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DALSIM_FUZZ=ON \
	  -DALSIM_BUILD_TESTS=OFF -DALSIM_BUILD_BENCHMARKS=OFF > $(FUZZ_DIR).configure.log 2>&1 \
	  || { cat $(FUZZ_DIR).configure.log; exit 1; }
	@cmake --build $(FUZZ_DIR) --target alsim_fuzzers -j $(JOBS)

fuzz: fuzz-build
	@FUZZ_SEED=$(FUZZ_SEED) tests/fuzz/run_fuzzers.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-ci:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_CI_SECONDS) FUZZ_SEED=$(FUZZ_CI_SEED)

fuzz-corpus: fuzz-build
	rm -rf tests/fuzz/corpus
	$(FUZZ_DIR)/bin/alsim_fuzz_make_corpus tests/fuzz/corpus scenes

clean:
	rm -rf build build-asan build-tsan build-fuzz build*.configure.log
