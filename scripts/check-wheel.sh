#!/usr/bin/env bash
# The distribution as a user gets it: the sdist and the wheel built from this
# checkout, served as a package index and installed by name into a clean
# virtualenv outside it, its CLI run and its pytest
# fixtures used by a suite (examples/) that lives outside the checkout too.
# The suite reuses a running cluster made from the same spec and keeps it
# (the e2e tests that follow start from a fresh one of their own), under the
# e2e suite's name: a presenter's crashloop cluster is left alone. On a
# failure the work directory is kept as well, with the suite's runs/.
set -o errexit -o nounset -o pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/crashloop-wheel.XXXXXX")
keep_on_failure() {
  status=$?
  if [ "$status" -eq 0 ]; then rm -rf "$work"; else echo "wheel check failed; kept $work" >&2; fi
}
trap keep_on_failure EXIT

started=$SECONDS
# The sdist, then the wheel built from it (so the sdist is proved whole), their metadata
# checked as an index would render it.
"$root/.venv/bin/python" -m build --outdir "$work/dist" "$root" >"$work/build.log" 2>&1
"$root/.venv/bin/twine" check --strict "$work"/dist/*

# Installed as a user installs it: by name, from a package index (a PEP 503 simple index
# of dist/ served on 127.0.0.1); its dependencies from the index pip uses here.
version=$("$root/.venv/bin/python" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' "$root/pyproject.toml")
project="$work/index/simple/crashloop-harness"
mkdir -p "$project"
{
  echo '<!DOCTYPE html><html><body>'
  for file in "$work"/dist/*; do
    cp "$file" "$project/"
    echo "<a href=\"$(basename "$file")#sha256=$(sha256sum "$file" | cut -d' ' -f1)\">$(basename "$file")</a><br>"
  done
  echo '</body></html>'
} >"$project/index.html"
printf '<!DOCTYPE html><html><body><a href="crashloop-harness/">crashloop-harness</a></body></html>\n' \
  >"$work/index/simple/index.html"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/index" >"$work/index.log" 2>&1 &
server=$!
trap 'status=$?; kill "$server" 2>/dev/null; (exit "$status"); keep_on_failure' EXIT
index="http://127.0.0.1:$port/simple/"
# Until the server answers (curl retries a refused connection, 10 s at most).
curl --silent --fail --retry 30 --retry-connrefused --retry-max-time 10 --output /dev/null "$index"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --index-url "$index" \
  --extra-index-url "${PIP_INDEX_URL:-https://pypi.org/simple}" "crashloop-harness==$version"
grep -q "GET /simple/crashloop-harness/crashloop_harness-$version" "$work/index.log" || {
  echo "pip did not take crashloop-harness $version from the local index" >&2
  exit 1
}
echo "sdist and wheel built, checked and installed from a local index in $((SECONDS - started)) s"

cp -r "$root/examples" "$work/suite"
cd "$work/suite"
export PATH="$work/venv/bin:$PATH"
crashloop --version
crashloop --help >/dev/null
crashloop check --help >/dev/null
crashloop config >/dev/null
# The presenter's fallback: the shipped recording, with no engine to reach.
DOCKER_HOST=unix:///nonexistent/docker.sock crashloop demo --replay --speed 20 --plain >/dev/null
# The JSON Schemas the docs publish, in the installed package, the same bytes.
for schema in summary fleet; do
  installed=$(python3 -c 'import sys; from importlib.resources import files; print(files("crashloop_harness") / "resources" / "schema" / f"{sys.argv[1]}.schema.json")' "$schema")
  cmp "$installed" "$root/docs/schema/$schema.schema.json"
done
# The plugin loads with no -p workaround, and the default install brings no pytest-kind
# (GPL, and options such as --kubeconfig a suite may define itself): the `kind` extra does.
pytest --co -q --strict-markers >/dev/null
if python3 -c 'import pytest_kind' 2>/dev/null; then
  echo "the default install brought pytest-kind: it belongs to the kind extra" >&2
  exit 1
fi
if pytest --help | grep -qE '^ +--(kubeconfig|cluster-name|keep-cluster|kind-image)'; then
  echo "the default install adds an unprefixed option a suite may define itself" >&2
  exit 1
fi
# A guest in the user's project: one with a harness/ package of its own (a common name for a
# test harness) still runs its tests with the wheel installed; the wheel has no top-level
# package of that name.
if python3 -c 'import sys, zipfile; sys.exit(not any(n.startswith("harness/") for n in zipfile.ZipFile(sys.argv[1]).namelist()))' "$work"/dist/*.whl; then
  echo "the wheel installs a top-level harness/ package: it shadows the user's own" >&2
  exit 1
fi
mkdir -p "$work/their-project/harness"
printf 'ANSWER = 42\n' >"$work/their-project/harness/__init__.py"
printf 'from harness import ANSWER\n\n\ndef test_their_own_harness() -> None:\n    assert ANSWER == 42\n' \
  >"$work/their-project/test_theirs.py"
(cd "$work/their-project" && pytest -q -p no:cacheprovider test_theirs.py)
pytest --strict-markers -p no:cacheprovider --crashloop-reuse --crashloop-cluster-name crashloop-e2e
echo "wheel check passed in $((SECONDS - started)) s"
