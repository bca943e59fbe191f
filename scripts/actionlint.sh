#!/usr/bin/env bash
# Lint the GitHub Actions workflows with actionlint, built from the Go module
# proxy (no GitHub release download, which these machines cannot reach) into
# the harness's cache, once per version. Independent of make: run it directly.
#
#   scripts/actionlint.sh [extra actionlint flags]
#
# ACTIONLINT_VERSION overrides the pinned version; CRASHLOOP_CACHE_DIR or
# XDG_CACHE_HOME move the cache as they do for the harness (harness/crashloop_harness/core/paths.py).
set -euo pipefail

# The newest version the Go module proxy served when this was pinned
# (`go list -m -versions github.com/rhysd/actionlint`).
version="${ACTIONLINT_VERSION:-v1.7.12}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${CRASHLOOP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/crashloop-harness}"
bin_dir="$cache/bin/actionlint-$version"
actionlint="$bin_dir/actionlint"

if [[ ! -x "$actionlint" ]]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "actionlint $version is not built and Go is not installed: install Go >= 1.25 from https://go.dev/dl/ (core/pins.py GO_MINIMUM)" >&2
    exit 2
  fi
  echo "building actionlint $version into $bin_dir" >&2
  mkdir -p "$cache/bin"
  # Build into a scratch directory and rename: an interrupted build never
  # leaves a binary that the check above would take for a finished one.
  staging="$(mktemp -d "$cache/bin/.actionlint-$version.XXXXXX")"
  trap 'rm -rf "$staging"' EXIT
  # The same Go caches as the harness's own builds (harness/crashloop_harness/core/paths.py go_env).
  GOBIN="$staging" \
    GOMODCACHE="$cache/go/mod" \
    GOCACHE="$cache/go/build" \
    GOFLAGS=-mod=mod \
    go install "github.com/rhysd/actionlint/cmd/actionlint@$version"
  rm -rf "$bin_dir"
  mv "$staging" "$bin_dir"
  trap - EXIT
fi

flags=()
# actionlint runs shellcheck and pyflakes on `run:` scripts when it finds
# them on PATH; say so when they are missing instead of skipping silently.
if ! command -v shellcheck >/dev/null 2>&1; then
  echo "note: shellcheck not found; run: scripts are not shellchecked" >&2
  flags+=(-shellcheck=)
fi
if ! command -v pyflakes >/dev/null 2>&1; then
  flags+=(-pyflakes=)
fi

shopt -s nullglob
workflows=("$root"/.github/workflows/*.yml "$root"/.github/workflows/*.yaml)
if ((${#workflows[@]} == 0)); then
  echo "no workflows under $root/.github/workflows" >&2
  exit 0
fi
cd "$root"
exec "$actionlint" "${flags[@]}" "$@" "${workflows[@]/#$root\//}"
