# The two commands of the README:
#   make run    install what is missing, build, start alsim-server and show that it serves
#   make test   install what is missing, build, check formatting, run every test
# Everything else here is a convenience for developers (see `make help`).

BUILD_DIR   ?= build
BUILD_TYPE  ?= Release
JOBS        ?= $(shell nproc)
LISTEN      ?= 127.0.0.1:50051
METRICS     ?= 127.0.0.1:9464
CMAKE_FLAGS ?=

.PHONY: help run test deps configure build format format-check tidy asan tsan bench clean

help:
	@echo "make run           build, start alsim-server on $(LISTEN) (metrics $(METRICS)), run the demo client (DEMO=0 skips it); Ctrl-C stops it"
	@echo "make test          build, check formatting and run all tests"
	@echo "make build         install dependencies and build into $(BUILD_DIR)/ (binaries in $(BUILD_DIR)/bin)"
	@echo "make format        reformat the sources with clang-format"
	@echo "make tidy          run clang-tidy over our sources"
	@echo "make asan | tsan   build and test with AddressSanitizer+UBSan | ThreadSanitizer"
	@echo "make bench         build and run the benchmarks"

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) > $(BUILD_DIR).configure.log 2>&1 \
	  || { cat $(BUILD_DIR).configure.log; exit 1; }

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build format-check
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

run: build
	@scripts/run-server.sh $(BUILD_DIR)/bin $(LISTEN) $(METRICS)

format:
	@scripts/format.sh fix

format-check: deps
	@scripts/format.sh check

tidy: configure
	@scripts/tidy.sh $(BUILD_DIR)

asan:
	@$(MAKE) --no-print-directory test BUILD_DIR=build-asan BUILD_TYPE=Debug CMAKE_FLAGS="-DALSIM_SANITIZE=address -DALSIM_BUILD_BENCHMARKS=OFF"

tsan:
	@$(MAKE) --no-print-directory test BUILD_DIR=build-tsan BUILD_TYPE=RelWithDebInfo CMAKE_FLAGS="-DALSIM_SANITIZE=thread -DALSIM_BUILD_BENCHMARKS=OFF"

bench: build
	@for b in $(BUILD_DIR)/bin/*_bench; do echo "== $$b"; $$b; done

clean:
	rm -rf build build-asan build-tsan build*.configure.log
