# Thin wrapper over CMake presets. `make run` and `make test` do all set-up on a fresh machine.
.PHONY: all deps build run test test-asan bench fuzz fuzz-replay format format-check clean

EXAMPLE ?= examples/boreas/cluster.yaml examples/boreas/verification.yaml
KUBESCHED := build/release/kubesched

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release

run: build
	$(KUBESCHED) simulate $(addprefix -f ,$(EXAMPLE))

test: build
	@ctest --preset release

test-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan
	@ctest --preset asan

bench: build
	@$(KUBESCHED) bench

# Coverage-guided fuzzing (fuzz/README.md): builds the fuzz targets instrumented and runs each for
# FUZZ_SECONDS; exits non-zero when one crashed. FUZZ_TARGETS="manifest quantity" selects targets
# (default: all of KUBESCHED_FUZZ_TARGETS), FUZZ_ENGINE=afl uses AFL++ instead of libFuzzer.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?=
FUZZ_ENGINE ?= libfuzzer
FUZZ_ENV = FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_ENGINE=$(FUZZ_ENGINE)

fuzz:
	@bash scripts/install-deps.sh fuzz
	@$(FUZZ_ENV) bash scripts/fuzz.sh run $(FUZZ_TARGETS)

# Runs inputs once through a target for a readable ASan/UBSan report:
#   make fuzz-replay FUZZ_TARGET=manifest FUZZ_INPUT=build/fuzz/out/manifest/findings/crash-...
fuzz-replay:
	@bash scripts/install-deps.sh fuzz
	@$(FUZZ_ENV) bash scripts/fuzz.sh replay $(FUZZ_TARGET) $(FUZZ_INPUT)

SOURCES = $(shell find src tests bench fuzz examples \( -name '*.h' -o -name '*.cc' \))

format:
	@clang-format -i $(SOURCES)

format-check: deps
	@clang-format --dry-run --Werror $(SOURCES)

clean:
	rm -rf build
