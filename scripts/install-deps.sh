#!/usr/bin/env bash
# Installs the Debian packages kubesched needs to build and test, only those missing.
# Uses sudo when not root. Safe to run repeatedly.
#
#   scripts/install-deps.sh         what `make build/test` and CI need (chromium: the HTML report's
#                                   end-to-end test opens it headless; python3-kubernetes: the
#                                   official Python client's end-to-end test)
#   scripts/install-deps.sh fuzz    that, plus the fuzzing toolchains of `make fuzz`: clang-16 with
#                                   libFuzzer and the sanitizer runtimes, llvm-symbolizer, AFL++
set -euo pipefail
packages=(
  g++ cmake ninja-build pkg-config clang-format
  libyaml-cpp-dev nlohmann-json3-dev rapidjson-dev libfyaml-dev libcpp-httplib-dev libboost-dev libssl-dev libcli11-dev libspdlog-dev libfmt-dev
  libre2-dev
  prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  coinor-libcbc-dev libglpk-dev
  libmimalloc-dev
  chromium
  python3-kubernetes
)
for group in "$@"; do
  case "$group" in
    fuzz) packages+=(clang-16 libclang-rt-16-dev llvm afl++) ;;
    *) echo "unknown package group '$group' (known: fuzz)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "Installing missing packages: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
