#!/usr/bin/env bash
# The distribution as a user gets it: the wheel built from this checkout,
# installed into a clean virtualenv outside it, its CLI run and its pytest
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
"$root/.venv/bin/pip" wheel --quiet --no-deps --wheel-dir "$work/dist" "$root"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "$work"/dist/*.whl
echo "wheel built and installed in $((SECONDS - started)) s: $(basename "$work"/dist/*.whl)"

cp -r "$root/examples" "$work/suite"
cd "$work/suite"
export PATH="$work/venv/bin:$PATH"
crashloop --version
crashloop --help >/dev/null
crashloop check --help >/dev/null
crashloop config >/dev/null
# Both plugins (ours and pytest-kind's) load with no -p workaround.
pytest --co -q --strict-markers >/dev/null
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
pytest --strict-markers -p no:cacheprovider --crashloop-reuse --cluster-name crashloop-e2e
echo "wheel check passed in $((SECONDS - started)) s"
