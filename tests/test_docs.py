"""The documentation stands with the code.

docs/cli.md has one `## tame-wh …` section per command and subcommand, each with a table whose
first column names the command's options; the tests compare those tables with the click command
tree in both directions. Every `tame-wh …` invocation shown in the docs or the README must name
real commands and options. Relative links and cited docs pages must resolve, and no file may cite
material from outside the repository.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from warehouse.cli.main import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CLI_DOC = DOCS / "cli.md"
README = ROOT / "README.md"
GLOBAL_SECTION = "Global options"

# What the repository must never cite: a specification file kept outside it, or its folder.
# (Spelled in pieces so that this file does not contain them.)
FORBIDDEN = ("SPEC" + " §", "SPEC" + ".md", ".." + "/shared")
CHECKED_SUFFIXES = {".py", ".rs", ".sql", ".md", ".toml"}
EXCLUDED_DIRS = (".venv/", "native/target/", ".git/")
# Applied Postgres migrations are checksummed by `tame-wh migrate` (warehouse/sync/migrate.py):
# editing one, even a comment, makes every database that applied it refuse the next migrate. These
# two keep an old citation in their first comment line for as long as they are byte-identical to
# what was applied; any other change to them, or a citation anywhere else, fails.
FROZEN_MIGRATIONS = {
    "migrations/001_create_run_cards.sql": (
        "1957aefc20c2e32f99ca62ed495cccf2f58d444e72729beab8087fc0037bf821"
    ),
    "migrations/002_add_comet_and_ci_columns.sql": (
        "933d613927d685510eb066597fa9da425e945111b99fc1d3bfaf338fe509b678"
    ),
}

_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
_WORD = re.compile(r"[a-z][a-z0-9-]*")
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_DOC_CITATION = re.compile(r"(?<![\w/.-])docs/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md")
_SHELL_STOPS = {"&&", "||", ";", ">", ">>", "<", "#", "·"}


# --- the command tree -------------------------------------------------------------------------


def command_tree() -> dict[tuple[str, ...], click.Command]:
    """Every command and subcommand of `tame-wh` by its path; () is the top-level group."""
    ctx = click.Context(main)
    tree: dict[tuple[str, ...], click.Command] = {(): main}

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        tree[path] = command
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, f"{' '.join(path)} {name} cannot be loaded"
                walk(sub, (*path, name))

    for name in COMMANDS:
        command = main.get_command(ctx, name)
        assert command is not None, f"COMMANDS[{name!r}] cannot be loaded"
        walk(command, (name,))
    return tree


def long_options(command: click.Command) -> set[str]:
    """The long options a command declares and shows (its `--help` comes from click; a hidden
    option is an old spelling kept working, not documented)."""
    return {
        name
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden
        for name in (*param.opts, *param.secondary_opts)
        if name.startswith("--")
    }


def takes_value(command: click.Command, option: str) -> bool:
    """Whether a long option of `command` is followed by a value."""
    for param in command.params:
        if isinstance(param, click.Option) and option in (*param.opts, *param.secondary_opts):
            return not (param.is_flag or param.count)
    return False


def label(path: tuple[str, ...]) -> str:
    """`tame-wh corpus add` for ("corpus", "add")."""
    return " ".join(("tame-wh", *path))


# --- reading Markdown -------------------------------------------------------------------------


def sections(text: str) -> dict[str, str]:
    """Level-2 sections of a page by heading text (backticks removed), each with its body."""
    found: dict[str, str] = {}
    heading, body = None, []
    for line in outside_fences(text):
        if line.startswith("## "):
            if heading is not None:
                found[heading] = "\n".join(body)
            heading, body = line[3:].replace("`", "").strip(), []
        elif heading is not None:
            body.append(line)
    if heading is not None:
        found[heading] = "\n".join(body)
    return found


def command_sections() -> dict[tuple[str, ...], str]:
    """docs/cli.md's sections by command path: `## tame-wh corpus add` → ("corpus", "add");
    `## Global options` → ()."""
    out: dict[tuple[str, ...], str] = {}
    for heading, body in sections(CLI_DOC.read_text(encoding="utf-8")).items():
        if heading == GLOBAL_SECTION:
            out[()] = body
        elif heading.split()[0] == "tame-wh":
            path = tuple(heading.split()[1:])
            assert path, "the top-level options belong under '## Global options'"
            assert path not in out, f"two sections for {label(path)}"
            out[path] = body
    return out


def table_cells(line: str) -> list[str]:
    """The cells of a Markdown table row (`\\|` is a literal bar)."""
    inner = line.strip().strip("|")
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", inner)]


def table_options(body: str) -> set[str]:
    """Long options named in the first column of the section's tables (header and separator
    rows skipped)."""
    found: set[str] = set()
    for line in body.splitlines():
        if not line.lstrip().startswith("|"):
            continue
        first = table_cells(line)[0]
        if set(first) <= set("-: ") or first == "option":
            continue
        found.update(_OPTION.findall(first))
    return found


def outside_fences(text: str) -> Iterator[str]:
    """The lines of a page that are not inside fenced code blocks."""
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def code_snippets(text: str) -> Iterator[str]:
    """Every line of a fenced code block and every inline code span of a page."""
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            yield line
        else:
            yield from (match.group(2).strip() for match in _INLINE_CODE.finditer(line))


def prose(text: str) -> str:
    """A page without its fenced blocks and inline code (where links are looked for)."""
    return "\n".join(_INLINE_CODE.sub("", line) for line in outside_fences(text))


# --- invocations ------------------------------------------------------------------------------


def invocations(snippet: str) -> Iterator[list[str]]:
    """The words after each `tame-wh` of a snippet, up to the end of that shell command."""
    words = snippet.split()
    for start, word in enumerate(words):
        if word != "tame-wh":
            continue
        tail: list[str] = []
        for i in range(start + 1, len(words)):
            token = words[i]
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if token == "tame-wh" or token in _SHELL_STOPS:
                break
            if token == "|" and not nxt.lstrip("[(").startswith("-"):
                break  # a pipe into another program (an alternative `[-a | -b]` continues)
            tail.append(token)
        yield tail


def bare_command(snippet: str, tree: dict[tuple[str, ...], click.Command]) -> list[str] | None:
    """A snippet written as a command without the program name (`compare --bin`, README's
    command table): its words when the first is a command and some option follows, else None."""
    words = snippet.split()
    if len(words) > 1 and (words[0],) in tree and any(_OPTION.match(w.lstrip("[(")) for w in words):
        return words
    return None


def check_invocation(
    words: list[str], tree: dict[tuple[str, ...], click.Command], where: str
) -> list[str]:
    """Problems of one invocation: unknown commands, subcommands or options (before the command
    only global options; after it the command's own, and global ones, which the CLI moves)."""
    problems: list[str] = []
    shown = " ".join(["tame-wh", *words])
    i = 0
    while i < len(words) and words[i].startswith("-"):
        option = words[i].split("=")[0]
        if option.startswith("--") and option not in long_options(main) | {"--help"}:
            problems.append(f"{where}: `{shown}`: {option} is not a global option")
        if "=" not in words[i] and takes_value(main, option):
            i += 1
        i += 1
    if i == len(words) or not _WORD.fullmatch(words[i]):
        return problems  # no command, or a placeholder such as COMMAND
    path: tuple[str, ...] = (words[i],)
    if path not in tree:
        return [*problems, f"{where}: `{shown}`: no command {words[i]!r}"]
    i += 1
    if isinstance(tree[path], click.Group) and i < len(words) and _WORD.fullmatch(words[i]):
        if (*path, words[i]) not in tree:
            return [*problems, f"{where}: `{shown}`: {label(path)} has no subcommand {words[i]!r}"]
        path = (*path, words[i])
        i += 1
    allowed = long_options(tree[path]) | long_options(main) | {"--help"}
    for word in words[i:]:
        for option in _OPTION.findall(word):
            if word.lstrip("[(").startswith(option) and option not in allowed:
                problems.append(f"{where}: `{shown}`: {label(path)} has no option {option}")
    return problems


def doc_pages() -> list[Path]:
    """The Markdown pages the docs tests read: docs/*.md and the README."""
    return [*sorted(DOCS.glob("*.md")), README]


# --- the tests --------------------------------------------------------------------------------


def test_every_command_and_option_has_its_row_in_the_cli_doc():
    documented = command_sections()
    problems = []
    for path, command in command_tree().items():
        if path not in documented:
            problems.append(f"docs/cli.md has no section '## {label(path)}'")
            continue
        for option in sorted(long_options(command) - table_options(documented[path])):
            problems.append(f"docs/cli.md: '## {label(path)}' does not list {option}")
    assert problems == []


def test_the_cli_doc_documents_no_command_or_option_the_cli_lacks():
    tree = command_tree()
    problems = []
    for path, body in command_sections().items():
        if path not in tree:
            problems.append(f"docs/cli.md documents {label(path)}, which does not exist")
            continue
        for option in sorted(table_options(body) - long_options(tree[path])):
            problems.append(f"docs/cli.md: {label(path)} has no option {option}")
    assert problems == []


def test_options_named_in_a_command_section_belong_to_that_command():
    tree = command_tree()
    global_options = long_options(main) | {"--help"}
    problems = []
    for path, body in command_sections().items():
        if not path or path not in tree:
            continue
        allowed = long_options(tree[path]) | global_options
        for snippet in code_snippets(body):
            if "tame-wh" in snippet.split() or bare_command(snippet, tree) is not None:
                continue  # checked as an invocation
            for option in _OPTION.findall(snippet):
                if option not in allowed:
                    problems.append(f"docs/cli.md: '## {label(path)}' mentions {option}")
    assert problems == []


def test_every_tame_wh_invocation_in_the_docs_exists():
    tree = command_tree()
    problems = []
    checked = 0
    for page in doc_pages():
        where = str(page.relative_to(ROOT))
        for snippet in code_snippets(page.read_text(encoding="utf-8")):
            for words in invocations(snippet):
                problems += check_invocation(words, tree, where)
                checked += 1
            bare = bare_command(snippet, tree)
            if bare is not None and "tame-wh" not in snippet.split():
                problems += check_invocation(bare, tree, where)
                checked += 1
    assert checked > len(COMMANDS)  # the parser found the docs' examples
    assert problems == []


def test_the_invocation_check_catches_unknown_commands_and_options():
    tree = command_tree()
    assert check_invocation(["audit", "--train", "x", "--testset", "y"], tree, "t") == []
    assert check_invocation(["--db", "w.duckdb", "runs", "list", "--tag", "a=b"], tree, "t") == []
    assert (
        check_invocation(["sync", "[--dsn", "DSN", "|", "--supabase-url", "URL]"], tree, "t") == []
    )
    assert check_invocation(["report", "RUN", "--bogus"], tree, "t")
    assert check_invocation(["corpus", "remove", "NAME"], tree, "t")
    assert check_invocation(["frobnicate"], tree, "t")
    assert check_invocation(["--json", "leaderboard"], tree, "t")  # --json is not global
    assert list(invocations("tame-wh leaderboard | head -3")) == [["leaderboard"]]


def _repository_files() -> list[str]:
    """Tracked and new (not ignored) files, relative to the repository root."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return sorted({f for f in listed if (ROOT / f).is_file()})


def _checked_files() -> list[str]:
    """Source and documentation files outside virtual environments and build output."""
    return [
        f
        for f in _repository_files()
        if Path(f).suffix in CHECKED_SUFFIXES and not f.startswith(EXCLUDED_DIRS)
    ]


def test_no_file_cites_material_outside_the_repository():
    problems = []
    for name in _checked_files():
        data = (ROOT / name).read_bytes()
        if (
            name in FROZEN_MIGRATIONS
            and hashlib.sha256(data).hexdigest() == FROZEN_MIGRATIONS[name]
        ):
            continue
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            problems += [f"{name}:{number}: {f!r}" for f in FORBIDDEN if f in line]
    assert problems == []


def test_frozen_migrations_are_the_applied_ones():
    for name, digest in FROZEN_MIGRATIONS.items():
        actual = hashlib.sha256((ROOT / name).read_bytes()).hexdigest()
        assert actual == digest, f"{name} changed after it was applied; add a new migration"


def test_docs_pages_cited_by_the_code_exist():
    problems = []
    for name in _checked_files():
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            for cited in _DOC_CITATION.findall(line):
                if not (ROOT / cited).is_file():
                    problems.append(f"{name}:{number}: {cited} does not exist")
    assert problems == []


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: link and code markup dropped, lowercase, punctuation
    removed, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The heading anchors of a Markdown page (repeated headings get -1, -2, …)."""
    seen: dict[str, int] = {}
    found = set()
    for line in outside_fences(page.read_text(encoding="utf-8")):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def test_relative_links_resolve_to_files_and_headings():
    problems = []
    for page in doc_pages():
        where = page.relative_to(ROOT)
        for target in _LINK.findall(prose(page.read_text(encoding="utf-8"))):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:, …
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                problems.append(f"{where}: link to {target}: no such file")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                problems.append(f"{where}: link to {target}: no such heading")
    assert problems == []


def test_the_docs_index_links_every_page():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    linked = {target.partition("#")[0] for target in _LINK.findall(prose(index))}
    pages = {p.name for p in DOCS.glob("*.md") if p.name != "README.md"}
    assert pages - linked == set()
    assert "docs/README.md" in {
        t.partition("#")[0] for t in _LINK.findall(prose(README.read_text(encoding="utf-8")))
    }
