"""Check what `python -m build` made against the git checkout: python .ci/check_dist.py DIST_DIR

The sdist must hold every tracked file the build and the tests read (all but .ci/, docs/,
mkdocs.yml, benchmarks/, .gitignore); the wheel every tracked file of the packages (modules, .pyi
stubs, example data, the moses_integration programs) and one compiled extension per
pyx/*.pyx. A file executable in git (mert-moses.pl runs the programs by name) must be
executable in both. Prints one line per problem and exits 1 if there is any.
"""

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

NOT_IN_SDIST = (".ci/", "docs/", "mkdocs.yml", "benchmarks/", ".gitignore")
PACKAGE_DIRS = ("mtplug/", "moses_integration/")


def tracked_files() -> dict:
    """path -> executable? for every file git tracks."""
    out = subprocess.run(["git", "ls-files", "-s"], capture_output=True, text=True, check=True).stdout
    files = {}
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        files[path] = meta.split()[0] == "100755"
    return files


def sdist_files(path: Path) -> dict:
    with tarfile.open(path) as tar:
        # members are NAME-VERSION/...: drop the top folder
        return {m.name.split("/", 1)[1]: bool(m.mode & 0o111) for m in tar.getmembers()
                if m.isfile() and "/" in m.name}


def wheel_files(path: Path) -> dict:
    with zipfile.ZipFile(path) as whl:
        return {i.filename: bool((i.external_attr >> 16) & 0o111) for i in whl.infolist()
                if not i.is_dir()}


def compare(label: str, expected: dict, have: dict) -> list:
    problems = [f"{label}: missing {p}" for p in sorted(expected) if p not in have]
    problems += [f"{label}: {p} is not executable" for p in sorted(expected)
                 if expected[p] and p in have and not have[p]]
    return problems


def main(dist: Path) -> int:
    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        print(f"check_dist: want one sdist and one wheel in {dist}, found {sdists + wheels}")
        return 1
    tracked = tracked_files()
    problems = compare(sdists[0].name, {p: x for p, x in tracked.items() if not p.startswith(NOT_IN_SDIST)},
                       sdist_files(sdists[0]))
    wheel = wheel_files(wheels[0])
    problems += compare(wheels[0].name, {p: x for p, x in tracked.items() if p.startswith(PACKAGE_DIRS)}, wheel)
    for pyx in sorted(p for p in tracked if p.startswith("pyx/") and p.endswith(".pyx")):
        name = PurePosixPath(pyx).stem
        if not any(f.startswith(f"mtplug/_ext/{name}.") and f.endswith((".so", ".pyd")) for f in wheel):
            problems.append(f"{wheels[0].name}: no compiled mtplug/_ext/{name} (from {pyx})")
    for problem in problems:
        print(f"check_dist: {problem}")
    if not problems:
        print(f"check_dist: {sdists[0].name} and {wheels[0].name} hold every file they should")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
