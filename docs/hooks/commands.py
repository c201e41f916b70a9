"""MkDocs hook: pages generated at build time, so that they cannot drift from the code.

* ``commands/*.md``: a page per ``mtplug`` command (and per ``mtplug optimize``
  algorithm), rendered from the argparse parsers of :func:`mtplug.cli.build_parser`;
* ``commands/moses-programs.md``: the programs of ``mtplug mertdir``, from their parsers;
* ``index.md``: README.md, its ``docs/`` links made relative to the site.

``on_config`` fills the "Commands" section of the nav with the generated pages and
``on_files`` adds them to the build; nothing generated is written into the checkout.
The test suite calls :func:`command_pages` directly (tests/test_docs.py).
"""

from __future__ import annotations

import argparse
import html
import importlib
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: the nav entry that on_config expands into the generated command pages
NAV_SECTION = "Commands"
NAV_INDEX = "commands/index.md"
MOSES_PAGE = "commands/moses-programs.md"
MOSES_INTRO = """\
`mert-moses.pl --mertdir=$(mtplug mertdir)` runs these programs instead of Moses's own
([With mert-moses.pl](../mert-moses.md) explains the set-up and what each writes). They take
their Moses namesakes' flags; flags Moses knows that cannot change the result are accepted
with a warning, flags whose effect mtplug does not provide are errors naming them.
`mert` and `kbmira` run any mtplug optimizer with `--algorithm NAME`, and
`mert --algorithm NAME --help` lists that optimizer's options; the sections below show
each program with its default algorithm."""
#: fixed help width, so that the pages do not depend on the terminal of the build
WIDTH = 100

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]])")


def _escape(text: str) -> str:
    """``text`` as literal Markdown (help strings use *, _, [, ] and < as plain text)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def _formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    return parser.formatter_class(prog=parser.prog, width=WIDTH)


def _usage(parser: argparse.ArgumentParser) -> str:
    fmt = _formatter(parser)
    fmt.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return fmt.format_help().strip()


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    """name -> (parser, one-line help) of ``parser``'s subcommands (none: {})."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return {name: (sub, helps.get(name, "")) for name, sub in action.choices.items()}
    return {}


def parser_markdown(parser: argparse.ArgumentParser, title: str, level: int = 1,
                    sub_links: dict[str, str] | None = None) -> str:
    """One parser as Markdown: title, description, usage, each argument group's options
    with their help, and the epilog (the examples) as ``--help`` prints it.

    sub_links: subcommand name -> page, for a parser with subcommands.

    argparse has no public API for its groups and formatted options; the private ones used
    here (``_action_groups``, ``_format_action_invocation``, ``_expand_help``) are what
    ``--help`` itself prints with, so an option reads on its page as in the terminal.
    """
    h = "#" * level
    out = [f"{h} {title}", ""]
    if parser.description:
        out += [_escape(parser.description), ""]
    out += ["```text", _usage(parser), "```", ""]
    fmt = _formatter(parser)
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if a.help is not argparse.SUPPRESS]
        if not actions:
            continue
        # a heading starts with a capital, unless it starts with a name written in lower case
        title = group.title if group.title.startswith("mtplug") else group.title[:1].upper() + group.title[1:]
        out += [f"{h}# {title}", ""]
        if group.description:
            out += [_escape(group.description), ""]
        for action in actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, (_, helptext) in _subcommands(parser).items():
                    link = f"[`{name}`]({sub_links[name]})" if sub_links else f"`{name}`"
                    out.append(f"- {link}: {_escape(helptext)}")
                continue
            line = f"- `{fmt._format_action_invocation(action)}`"
            if action.help:
                line += f": {_escape(fmt._expand_help(action))}"
            out.append(line)
        out.append("")
    if parser.epilog:
        out += [f"{h}# {'Examples' if 'example' in parser.epilog else 'More'}", "",
                "```text", parser.epilog.strip("\n"), "```", ""]
    return "\n".join(out)


def _page_name(command: str, algorithm: str = "") -> str:
    return f"commands/{command}-{algorithm}.md" if algorithm else f"commands/{command}.md"


def command_pages() -> dict[str, str]:
    """Site path -> Markdown of every generated command page: ``commands/index.md`` (the
    top-level parser), one page per subcommand of :func:`mtplug.cli.build_parser` and one
    per subcommand of a subcommand (``commands/optimize-mert.md``)."""
    from mtplug.cli import build_parser

    top = build_parser()
    commands = _subcommands(top)
    pages = {NAV_INDEX: parser_markdown(top, "mtplug", sub_links={
        name: Path(_page_name(name)).name for name in commands})}
    pages[NAV_INDEX] += ("\nEvery command takes `--help`, `--quiet`, logs on stderr and writes results on stdout; "
                         "[Using mtplug](../usage.md) has the conventions they share, and "
                         "[the Moses programs](moses-programs.md) take Moses's flags.\n")
    for name, (parser, _) in commands.items():
        subs = _subcommands(parser)
        links = {sub: Path(_page_name(name, sub)).name for sub in subs}
        pages[_page_name(name)] = parser_markdown(parser, f"mtplug {name}", sub_links=links or None)
        for sub, (subparser, _) in subs.items():
            pages[_page_name(name, sub)] = parser_markdown(subparser, f"mtplug {name} {sub}")
    return pages


def moses_programs_page() -> str:
    """Markdown of the page on the programs ``mtplug mertdir`` gives mert-moses.pl, a
    section per program from its parser (``mert`` and ``kbmira`` with their default
    ``--algorithm``)."""
    from mtplug.integrations.moses import PROGRAMS

    out = ["# Moses programs (`--mertdir`)", "", MOSES_INTRO, ""]
    for program, module in PROGRAMS.items():
        parser = importlib.import_module(f"mtplug.integrations.moses.{module}").build_parser()
        out.append(parser_markdown(parser, f"`{program}`", level=2))
    return "\n".join(out)


def nav_commands() -> list:
    """The nav entries of the generated pages (optimize's algorithms nested under it)."""
    from mtplug.cli import build_parser

    nav: list = [{"Overview": NAV_INDEX}]
    for name, (parser, _) in _subcommands(build_parser()).items():
        subs = _subcommands(parser)
        if subs:
            nav.append({f"mtplug {name}": [{"Overview": _page_name(name)}]
                        + [{sub: _page_name(name, sub)} for sub in subs]})
        else:
            nav.append({f"mtplug {name}": _page_name(name)})
    nav.append({"Moses programs": MOSES_PAGE})
    return nav


def readme_home() -> str:
    """README.md as the site's home page: its ``docs/`` links made relative to docs/."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.sub(r"\]\(docs/", "](", text)


# ------------------------------------------------------------------ mkdocs events
def on_config(config):
    nav = config["nav"]
    for i, entry in enumerate(nav):
        if isinstance(entry, dict) and entry.get(NAV_SECTION) == NAV_INDEX:
            nav[i] = {NAV_SECTION: nav_commands()}
            return config
    raise ValueError(f"mkdocs.yml: the nav needs the entry '{NAV_SECTION}: {NAV_INDEX}' (filled by {__file__})")


def on_files(files, config):
    from mkdocs.structure.files import File

    generated = {**command_pages(), MOSES_PAGE: moses_programs_page(), "index.md": readme_home()}
    for path, text in generated.items():
        if files.get_file_from_path(path) is not None:
            raise ValueError(f"docs/{path} is generated by {__file__}; remove the file")
        files.append(File.generated(config, path, content=text))
    return files
