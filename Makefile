# Thin wrapper over CMake presets. `make run` and `make test` do all set-up on a fresh machine.
.PHONY: all deps build run test test-asan bench fuzz format format-check clean

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

SOURCES = $(shell find src tests bench fuzz \( -name '*.h' -o -name '*.cc' \))

format:
	@clang-format -i $(SOURCES)

format-check: deps
	@clang-format --dry-run --Werror $(SOURCES)

clean:
	rm -rf build
