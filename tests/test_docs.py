"""The documentation: the generated command pages cover every command and option, and
README's relative links point at files. (The site itself is built in strict mode by CI,
which checks every link and anchor; this runs without mkdocs.)"""

import argparse
import importlib.util
import re
from pathlib import Path

import pytest

from mtplug.cli import build_parser
from mtplug.integrations.moses import PROGRAMS

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"


@pytest.fixture(scope="module")
def hook():
    spec = importlib.util.spec_from_file_location("docs_hook_commands", REPO / "docs" / "hooks" / "commands.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _subparsers(parser: argparse.ArgumentParser) -> dict:
    return next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})


def _commands() -> list:
    """(page title, parser) of every command and every subcommand of a command."""
    found = []
    for name, parser in _subparsers(build_parser()).items():
        found.append((f"mtplug {name}", parser))
        found += [(f"mtplug {name} {sub}", subparser) for sub, subparser in _subparsers(parser).items()]
    return found


def _flags(parser: argparse.ArgumentParser) -> list:
    """The option strings --help shows (hidden aliases left out)."""
    return [flag for a in parser._actions if a.help is not argparse.SUPPRESS for flag in a.option_strings]


def _nav_pages(entries) -> list:
    pages = []
    for entry in entries:
        for value in entry.values():
            pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_a_page_per_command_with_every_option_and_the_examples(hook):
    pages = hook.command_pages()
    by_title = {text.split("\n", 1)[0]: text for text in pages.values()}
    for title, parser in _commands():
        assert f"# {title}" in by_title, f"no generated page for {title}"
        text = by_title[f"# {title}"]
        for flag in _flags(parser):
            assert flag in text, f"{title}: {flag} missing from its page"
        if parser.epilog:
            assert parser.epilog.strip("\n") in text, f"{title}: its --help examples are missing"
    assert len(pages) == len(_commands()) + 1      # and the overview


def test_every_generated_page_is_in_the_nav(hook):
    nav = _nav_pages(hook.nav_commands())
    assert sorted(nav) == sorted([*hook.command_pages(), hook.MOSES_PAGE])


def test_the_moses_programs_page_has_every_program_and_its_flags(hook):
    text = hook.moses_programs_page()
    for program, module in PROGRAMS.items():
        assert f"## `{program}`" in text
        parser = importlib.import_module(f"mtplug.integrations.moses.{module}").build_parser()
        for flag in _flags(parser):
            assert flag in text, f"{program}: {flag} missing"


def test_help_text_is_escaped_for_markdown(hook):
    assert hook._escape("a*b_c [x] <y> `z`") == r"a\*b\_c \[x\] &lt;y&gt; \`z\`"


def _relative_links(markdown: str) -> list:
    """Targets of the inline links and images outside code, without #anchors or external ones."""
    prose = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    targets = re.findall(r"\]\(([^)\s]+)\)", prose)
    return [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


def test_readme_links_point_at_files():
    links = _relative_links(README.read_text(encoding="utf-8"))
    assert links, "README links into docs/"
    missing = [link for link in links if not (REPO / link).is_file()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_readme_is_short_and_starts_with_the_set_up():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    first_code = text.split("```sh\n", 1)[1].split("```", 1)[0]
    assert 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && .venv/bin/mtplug example' in first_code
    assert ".venv/bin/python -m pytest -q" in first_code


def test_readme_says_what_the_skipped_tests_need_next_to_the_test_command():
    """Every variable naming a folder that tests skip without (the shared data, a real
    program's build) is named in the paragraph after the set-up block (issue 47)."""
    sources = "".join(p.read_text(encoding="utf-8") for p in (REPO / "tests").rglob("*.py"))
    variables = set(re.findall(r"""(?:environ\.get\(|_build\()["'](MTPLUG_\w+_DIR)["']""", sources))
    assert {"MTPLUG_SHARED_DIR", "MTPLUG_MOSES_DIR", "MTPLUG_CDEC_DIR"} <= variables
    after = README.read_text(encoding="utf-8").split(".venv/bin/python -m pytest -q\n```\n", 1)[1]
    paragraph = after.strip().split("\n\n", 1)[0]
    assert "../shared" in paragraph
    assert [v for v in sorted(variables) if f"`{v}`" not in paragraph] == []


def test_the_docs_extra_has_the_signature_formatter():
    """mkdocstrings-python lays out the API reference's signatures with black or ruff and, with
    neither installed, leaves them unformatted ("Formatting signatures requires either Black or
    Ruff to be installed"): the docs extra brings ruff, at the lint extra's pin."""
    tomllib = pytest.importorskip("tomllib")      # Python >= 3.11
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    ruff = [req for req in extras["docs"] if re.match(r"ruff\b", req)]
    assert ruff, f"the docs extra has no signature formatter: {extras['docs']}"
    assert ruff == [req for req in extras["lint"] if re.match(r"ruff\b", req)]
