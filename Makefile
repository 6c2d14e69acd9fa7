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
# The compiler of BUILD_DIR (docs/fuzzing.md, "The test build"): clang, with which one tree holds
# the shipped programs, the tests and the libFuzzer targets (clang's), or gcc (g++), which builds
# the fuzz targets in FUZZ_DIR. A tree configured with the other compiler is configured anew.
COMPILER    ?= clang
# ctest's parallelism: twice JOBS, as many tests wait on processes they start (servers, clients).
TEST_JOBS   ?= $(shell echo $$(( $(JOBS) * 2 )))
# make fuzz: the libFuzzer targets of tests/fuzz (docs/fuzzing.md), built in BUILD_DIR with
# COMPILER=clang, else in FUZZ_DIR (a clang tree of the fuzz targets alone), into bin/fuzz/; each
# runs FUZZ_SECONDS (0: replay the seeds and reproducers only), FUZZ_JOBS at a time; FUZZ_TARGETS
# picks some (default all). make test builds them with the rest and runs each for FUZZ_CI_SECONDS
# unless TEST_FUZZ=0 (make asan and tsan pass it).
FUZZ_DIR        ?= build-fuzz
FUZZ_SECONDS    ?= 60
FUZZ_JOBS       ?= $(JOBS)
FUZZ_CI_SECONDS ?= 10
# make fuzz-ci fixes libFuzzer's seed (a red CI run reproduces); make fuzz takes FUZZ_SEED if set.
FUZZ_CI_SEED    ?= 1
FUZZ_SEED       ?=
FUZZ_TARGETS    ?=
TEST_FUZZ       ?= 1

ifeq ($(COMPILER),clang)
  CC_BIN    := clang
  CXX_BIN   := clang++
  FUZZ_TREE := $(BUILD_DIR)
else ifeq ($(COMPILER),gcc)
  CC_BIN    := gcc
  CXX_BIN   := g++
  FUZZ_TREE := $(FUZZ_DIR)
else
  $(error COMPILER must be gcc or clang, not '$(COMPILER)')
endif
# make test's build of BUILD_DIR: with COMPILER=clang the fuzz targets too, in the same ninja run.
TEST_TARGETS := all $(if $(and $(filter clang,$(COMPILER)),$(filter 1,$(TEST_FUZZ))),alsim_fuzzers)

# $(call configure_tree,DIR,CC,CXX,CMAKE ARGS): configures DIR, anew if it has the other compiler.
define configure_tree
	@if [ -f $(1)/CMakeCache.txt ] && [ "$$(grep -c '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang' \
	      $(1)/CMakeCache.txt)" != "$(if $(filter clang++,$(3)),1,0)" ]; then \
	  echo "$(1)/ was configured with another compiler: configuring it anew with $(3)"; \
	  rm -rf $(1)/CMakeCache.txt $(1)/CMakeFiles; \
	fi
	@CC=$(2) CXX=$(3) cmake -S . -B $(1) -G Ninja $(4) > $(1).configure.log 2>&1 \
	  || { cat $(1).configure.log; exit 1; }
endef

.PHONY: help run test test-build deps configure build format format-check tidy asan tsan bench clean \
        fuzz fuzz-build fuzz-ci fuzz-corpus

help:
	@echo "make run           build, start alsim-server on $(LISTEN) (metrics $(METRICS)), run the demo client (DEMO=0 skips it)"
	@echo "                   and the browser viewer on http://$(VIEWER)/ (VIEWER=none skips it); Ctrl-C stops it"
	@echo "make test          build (and the fuzz targets), check formatting, run all tests, then fuzz each target"
	@echo "                   $(FUZZ_CI_SECONDS) s, $(FUZZ_JOBS) at a time (make fuzz-ci); COMPILER=gcc: g++ and a fuzz tree (docs/fuzzing.md)"
	@echo "make build         install dependencies and build into $(BUILD_DIR)/ with COMPILER=$(COMPILER) (binaries in $(BUILD_DIR)/bin)"
	@echo "make format        reformat the sources with clang-format"
	@echo "make tidy          run clang-tidy over our sources"
	@echo "make asan | tsan   build with g++ into build-asan/ | build-tsan/ and test with AddressSanitizer+UBSan | ThreadSanitizer"
	@echo "make bench         build and run the benchmarks"
	@echo "make fuzz          build the libFuzzer targets with clang into $(FUZZ_TREE)/bin/fuzz/ and run each for"
	@echo "                   FUZZ_SECONDS=$(FUZZ_SECONDS), FUZZ_JOBS=$(FUZZ_JOBS) at a time (FUZZ_TARGETS='create_fuzzer step_fuzzer'"
	@echo "                   picks some; crashes land in $(FUZZ_TREE)/fuzz/artifacts/; docs/fuzzing.md)"
	@echo "make fuzz-ci       the same, each target for $(FUZZ_CI_SECONDS) s with a fixed seed (make test runs it after the tests)"
	@echo "make fuzz-corpus   rewrite the seed corpora in tests/fuzz/corpus/ (after a format change)"

deps:
	@scripts/install-deps.sh

configure: deps
	$(call configure_tree,$(BUILD_DIR),$(CC_BIN),$(CXX_BIN),-DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS))

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# make test's build: BUILD_DIR (with COMPILER=clang and the fuzz targets), then with COMPILER=gcc
# the fuzz targets' own tree.
test-build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target $(TEST_TARGETS)
	@if [ "$(TEST_FUZZ)" = 1 ]; then $(MAKE) --no-print-directory fuzz-build; fi

test: test-build format-check
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(TEST_JOBS)
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
	@$(MAKE) --no-print-directory test COMPILER=gcc BUILD_DIR=build-asan BUILD_TYPE=Debug CMAKE_FLAGS="-DALSIM_SANITIZE=address -DALSIM_BUILD_BENCHMARKS=OFF" TEST_FUZZ=0

tsan:
	@$(MAKE) --no-print-directory test COMPILER=gcc BUILD_DIR=build-tsan BUILD_TYPE=RelWithDebInfo CMAKE_FLAGS="-DALSIM_SANITIZE=thread -DALSIM_BUILD_BENCHMARKS=OFF" TEST_FUZZ=0

bench: build
	@for b in $(BUILD_DIR)/bin/*_bench; do echo "== $$b"; $$b; done

# The fuzz targets and the instrumented alsim-scene-compiler they start (FUZZ_TREE/bin/fuzz/): in
# BUILD_DIR with COMPILER=clang, else in FUZZ_DIR, a clang tree that builds nothing else.
fuzz-build: deps
ifeq ($(COMPILER),clang)
	@$(MAKE) --no-print-directory configure
else
	$(call configure_tree,$(FUZZ_DIR),clang,clang++,-DCMAKE_BUILD_TYPE=Release -DALSIM_BUILD_FUZZERS=ON \
	  -DALSIM_BUILD_TESTS=OFF -DALSIM_BUILD_BENCHMARKS=OFF)
endif
	@cmake --build $(FUZZ_TREE) --target alsim_fuzzers -j $(JOBS)

fuzz: fuzz-build
	@FUZZ_SEED=$(FUZZ_SEED) FUZZ_JOBS=$(FUZZ_JOBS) tests/fuzz/run_fuzzers.sh $(FUZZ_TREE) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-ci:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_CI_SECONDS) FUZZ_SEED=$(FUZZ_CI_SEED)

fuzz-corpus: fuzz-build
	rm -rf tests/fuzz/corpus
	$(FUZZ_TREE)/bin/fuzz/alsim_fuzz_make_corpus tests/fuzz/corpus scenes

clean:
	rm -rf build build-asan build-tsan build-fuzz build*.configure.log
