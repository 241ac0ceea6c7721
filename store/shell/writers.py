"""Commands that write files, for the scan: which of their arguments they write.

``HANDLERS[name](cmd, name, args)`` reports each file the command writes with ``cmd.write`` (an
entry that may become a link or a moved folder with ``link=True``) and what it cannot tell with
``cmd.opaque`` (``cmd`` is a ``contract.Command``).
"""

from __future__ import annotations

from store.base import chars
from store.shell.words import LITERAL, Word, getopt, lit

TYPE_CHECKING = False
if TYPE_CHECKING:

    from store.shell.contract import Command, Handler

# every operand is written: (option letters taking a value, long options; "name=" takes a value)
_OPERANDS = {
    "rm": ("", ()), "rmdir": ("", ()), "unlink": ("", ()), "link": ("", ()), "tee": ("", ()),
    "shred": ("ns", ("iterations=", "size=", "random-source=")), "touch": ("dtr", ("date=", "reference=", "time=")),
    "mkdir": ("m", ("mode=",)), "mkfifo": ("m", ("mode=",)), "truncate": ("sr", ("size=", "reference=")),
}
# writes or runs only through options: (letters, longs, options naming a file written, options not analysed)
_OPTIONS = {
    "sort": ("kotST", ("output=", "temporary-directory=", "compress-program=", "key=", "field-separator=",
                       "buffer-size=", "files0-from=", "batch-size=", "parallel=", "random-source="),
             ("-o", "--output", "-T", "--temporary-directory"), ("--compress-program",)),
    "shuf": ("ion", ("output=", "input-range=", "head-count=", "random-source="), ("-o", "--output"), ()),
    "iconv": ("oft", ("output=", "from-code=", "to-code="), ("-o", "--output"), ()),
    "tree": ("oLPIHT", ("charset=", "filelimit=", "timefmt=", "sort="), ("-o",), ()),
    "less": ("bhjkoOpPtTxyz", ("log-file=", "LOG-FILE=", "tag=", "pattern=", "prompt="),
             ("-o", "-O", "--log-file", "--LOG-FILE"), ()),
    "rg": ("ABCEefgjMmrtT", ("pre=", "hostname-bin=", "regexp=", "file=", "glob=", "type=", "replace="), (),
           ("--pre", "--hostname-bin")),
    "ag": ("ABCGgm", ("pager=",), (), ("--pager",)),
    "fd": ("deEtxXjcS", ("exec=", "exec-batch=", "type=", "extension=", "exclude=", "max-depth="), (),
           ("-x", "-X", "--exec", "--exec-batch")),
    "file": ("emfFP", ("magic-file=", "files-from=", "separator=", "compile"), (), ("-C", "--compile")),
    "hash": ("p", (), (), ("-p",)),
}
_TAR_VALUED = "bCfFgHIKLNTVX"
_TAR_LONGS = ("file=", "directory=", "files-from=", "exclude-from=", "listed-incremental=", "use-compress-program=",
              "to-command=", "info-script=", "new-volume-script=", "checkpoint-action=", "rsh-command=",
              "rmt-command=", "remove-files", "to-stdout", "extract", "create", "list", "append", "update")
_TAR_RUNS = ("-I", "-F", "--use-compress-program", "--to-command", "--info-script", "--new-volume-script",
             "--checkpoint-action", "--rsh-command", "--rmt-command", "--remove-files")
_CURL_WRITES = ("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii",
                "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc")
_CURL_LONGS = ("output=", "dump-header=", "cookie-jar=", "trace=", "trace-ascii=", "stderr=", "libcurl=",
               "etag-save=", "hsts=", "alt-svc=", "config=", "output-dir=", "write-out=", "remote-name",
               "remote-name-all", "remote-header-name", "data=", "header=", "user=", "request=", "url=", "form=")
_WGET_WRITES = ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "--save-cookies",
                "--warc-file")
_WGET_LONGS = ("output-document=", "output-file=", "append-output=", "save-cookies=", "warc-file=", "execute=",
               "config=", "directory-prefix=", "input-file=", "spider", "recursive", "mirror", "page-requisites",
               "background")


def _operands(cmd: Command, name: str, args: list[Word]) -> None:
    shorts, longs = _OPERANDS[name]
    cmd.readonly = False
    for word in getopt(args, shorts, longs)[1]:
        cmd.write(word)


def _options(cmd: Command, name: str, args: list[Word]) -> None:
    shorts, longs, writes, runs = _OPTIONS[name]
    for option, value in getopt(args, shorts, longs)[0]:
        if option in runs:
            cmd.opaque(f"{name} {option} may write files or run programs")
        elif option in writes and value is not None:
            cmd.write(value)


def _modes(cmd: Command, name: str, args: list[Word]) -> None:
    """chmod, chown, chgrp: the first operand is the mode or owner (unless --reference=FILE)."""
    flags = "Rcfv" if name == "chmod" else "RcfvhHLP"
    ops, reference, options = [], False, True
    for word in args:
        text = word.literal() or ""
        if options and text == "--":
            options = False
        elif options and text.startswith("--"):
            reference = reference or text.startswith("--reference")
        elif not (options and len(text) > 1 and text[0] == "-" and all(c in flags for c in text[1:])):
            ops.append(word)
    cmd.readonly = False
    for word in ops if reference else ops[1:]:
        cmd.write(word)


def _setfacl(cmd: Command, name: str, args: list[Word]) -> None:
    longs = ("modify=", "modify-file=", "remove=", "remove-file=", "set=", "set-file=", "restore=", "test")
    opts, ops = getopt(args, "mMxX", longs)
    names = {option for option, _ in opts}
    if "--restore" in names:
        cmd.opaque("setfacl --restore changes the files named in its input")
    for word in [] if "--test" in names else ops:
        cmd.write(word)


def _is_dir(word: Word) -> bool:
    """The target is written as a folder: a trailing slash, ".", ".." or ending in "/." or "/.."."""
    text = word.literal() or ""
    return text.endswith("/") or text.rsplit("/", 1)[-1] in (".", "..")


_COPIES_LINKS = frozenset(("-a", "-d", "-P", "-R", "-r", "-s", "-l", "--archive", "--no-dereference", "--recursive",
                           "--preserve", "--link", "--symbolic-link"))


def _copy(cmd: Command, name: str, args: list[Word]) -> None:
    """cp, mv, ln, install: the target (a directory gets each source's name); mv also its sources."""
    longs = ("target-directory=", "suffix=", "mode=", "owner=", "group=", "strip-program=", "directory", "symbolic",
             "symbolic-link", "link", "archive", "no-dereference", "recursive", "preserve", "parents")
    opts, ops = getopt(args, "tSmog" if name == "install" else "tS", longs)
    names = {option for option, _ in opts}
    if "--strip-program" in names:
        cmd.runs_code("install --strip-program runs a program")
    dirs = [value for option, value in opts if option in ("-t", "--target-directory") and value]
    if name == "install" and names & {"-d", "--directory"}:
        dirs, ops = ops, []
    single_link = name == "ln" and not dirs and len(ops) == 1
    targets, sources = (dirs, ops) if dirs or single_link else (ops[-1:], ops[:-1])
    into = bool(dirs) or len(sources) > 1 or any(_is_dir(t) for t in targets)
    entries = name in ("mv", "ln") or bool(names & _COPIES_LINKS)  # may become a link or a moved folder
    cmd.readonly = False
    for target in targets or [lit(".")]:
        if targets:
            cmd.write(target, link=entries and not into)
        for source in sources if into or single_link else []:
            base = (source.literal() or "").rstrip("/").rsplit("/", 1)[-1]
            if base:
                cmd.write(target, base, link=entries)
    linked = name == "ln" or (name == "cp" and names & {"-l", "-s", "--link", "--symbolic-link"})
    for source in sources if name == "mv" or linked else []:
        cmd.write(source)  # moved away, or written later through the new link
    if linked and names & {"-s", "--symbolic", "--symbolic-link"}:
        _link_sources(cmd, sources, targets, into or single_link)


def _link_sources(cmd: Command, sources: list[Word], targets: list[Word], into: bool) -> None:
    """A relative symbolic link points from the link's directory: that path counts as written too."""
    for target in targets:
        where = target.literal() or "" if into else (target.literal() or "").rpartition("/")[0]
        for source in sources:
            text = source.literal() or "/"
            if where and not text.startswith("/"):
                cmd.write(lit(f"{where}/{text}"))


def _dd(cmd: Command, name: str, args: list[Word]) -> None:
    for word in args:
        if word.parts and word.parts[0][0] in LITERAL and word.parts[0][1].startswith("of="):
            cmd.write(word.tail(3) or word)


def _second(cmd: Command, name: str, args: list[Word]) -> None:
    """uniq [IN [OUT]], xxd [IN [OUT]]: every operand after the first is written."""
    shorts, longs = ("fsw", ("skip-fields=", "skip-chars=", "check-chars=")) if name == "uniq" else ("cglosn", ())
    for word in getopt(args, shorts, longs)[1][1:]:
        cmd.write(word)


def _split(cmd: Command, name: str, args: list[Word]) -> None:
    """split and csplit write files named PREFIX + suffix: PREFIX is reported."""
    if name == "split":
        longs = ("filter=", "additional-suffix=", "suffix-length=", "bytes=", "line-bytes=", "lines=", "number=")
        opts, ops = getopt(args, "abClnt", longs)
        prefix = ops[1] if len(ops) > 1 else lit("x")
    else:
        opts, ops = getopt(args, "bfn", ("prefix=", "suffix-format=", "digits="))
        prefix = next((v for option, v in opts if option in ("-f", "--prefix") and v), lit("xx"))
    if any(option == "--filter" for option, _ in opts):
        cmd.opaque("split --filter runs a command")
    cmd.write(prefix)


def _tar(cmd: Command, name: str, args: list[Word]) -> None:
    first = args[0].literal() if args else None
    if first and not first.startswith("-"):  # old style: tar czf ARCHIVE ...
        values, args = list(args[1:]), []
        for letter in first:
            args.append(lit("-" + letter))
            if letter in _TAR_VALUED and values:
                args.append(values.pop(0))
        args += values
    opts, _ = getopt(args, _TAR_VALUED, _TAR_LONGS)
    names = {option for option, _ in opts}
    for option in sorted(names.intersection(_TAR_RUNS)):
        cmd.opaque(f"tar {option} runs a program or removes files")
    archives = [v for option, v in opts if option in ("-f", "--file", "-g", "--listed-incremental") and v]
    if names & {"-x", "--extract", "--get"}:
        if not names & {"-O", "--to-stdout"}:
            cmd.opaque("tar -x writes the files named in the archive")
    elif names & {"-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--delete"}:
        if not archives:
            cmd.opaque("tar writes an archive it does not name")
        for archive in archives:
            cmd.write(archive)
    elif not names & {"-t", "--list", "-d", "--diff", "--compare"}:
        cmd.opaque("tar without a known mode")


def _patch(cmd: Command, name: str, args: list[Word]) -> None:
    longs = ("directory=", "input=", "output=", "reject-file=", "strip=", "prefix=", "fuzz=", "suffix=", "dry-run")
    opts, ops = getopt(args, "BdDFgiopVYz", longs)
    names = {option for option, _ in opts}
    if "--dry-run" in names:
        return
    if names & {"-d", "--directory"}:
        cmd.opaque("patch -d writes in another directory")
    for option, value in opts:
        if option in ("-o", "--output", "-r", "--reject-file") and value:
            cmd.write(value)
    if ops:
        cmd.write(ops[0])
    elif not names & {"-o", "--output"}:
        cmd.opaque("patch writes the files named in the patch")


def _curl(cmd: Command, name: str, args: list[Word]) -> None:
    for option, value in getopt(args, "AbcCdDeEFHKmoPQrtTuUwxXyYz", _CURL_LONGS)[0]:
        if option in _CURL_WRITES and value is not None:
            cmd.write(value)
        elif option in ("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"):
            cmd.opaque("curl -O writes a file named from the URL")
        elif option in ("-K", "--config", "--output-dir") or "%output{" in (value.text if value else ""):
            cmd.opaque(f"curl {option} is not analysed")


def _wget(cmd: Command, name: str, args: list[Word]) -> None:
    args = [w for w in args if not _no_option(w.literal() or "")]
    opts, _ = getopt(args, "aABDeiIlOoPQRtTUwX", _WGET_LONGS)
    names = {option for option, _ in opts}
    for option, value in opts:
        if option in _WGET_WRITES and value is not None:
            cmd.write(value)
    for options, why in (({"-e", "--execute", "--config"}, "runs wgetrc commands"),
                         ({"-r", "--recursive", "-m", "--mirror", "-p", "--page-requisites"}, "saves many files"),
                         ({"-b", "--background"}, "writes wget-log")):
        if names & options:
            cmd.opaque(f"wget {sorted(names & options)[0]} {why}")
    if not names & {"-O", "--output-document", "--spider"}:
        cmd.opaque("wget saves a file named from the URL")


def _yq(cmd: Command, name: str, args: list[Word]) -> None:
    longs = ("output-format=", "input-format=", "indent=", "from-file=", "expression=", "split-exp=", "inplace")
    opts, ops = getopt(args, "opIs", longs)
    names = {option for option, _ in opts}
    if names & {"-s", "--split-exp"}:
        cmd.opaque("yq --split-exp writes files named by an expression")
    if names & {"-i", "--inplace"}:
        ops = ops[1:] if ops and ops[0].literal() in ("e", "eval", "ea", "eval-all") else ops
        for word in ops if names & {"--from-file", "--expression"} or len(ops) == 1 else ops[1:]:
            cmd.write(word)


def _mktemp(cmd: Command, name: str, args: list[Word]) -> None:
    opts, ops = getopt(args, "p", ("tmpdir", "suffix=", "dry-run"))
    names = {option for option, _ in opts}
    if names & {"-u", "--dry-run"}:
        return
    where = next((v for option, v in opts if option in ("-p", "--tmpdir") and v is not None), None)
    template = ops[0] if ops else lit("tmp.XXXXXXXXXX")
    if where is None and ops and not names & {"-t", "-p", "--tmpdir"}:
        cmd.write(template)
    else:  # $TMPDIR is taken to be /tmp
        cmd.write(where or lit("/tmp"), template.text)


HANDLERS: dict[str, Handler] = {
    **{name: _operands for name in _OPERANDS}, **{name: _options for name in _OPTIONS},
    "chmod": _modes, "chown": _modes, "chgrp": _modes, "setfacl": _setfacl, "cp": _copy, "mv": _copy,
    "ln": _copy, "install": _copy, "dd": _dd, "uniq": _second, "xxd": _second, "split": _split, "csplit": _split,
    "tar": _tar, "patch": _patch, "curl": _curl, "wget": _wget, "yq": _yq, "mktemp": _mktemp,
}


def _no_option(text: str) -> bool:
    """wget's ``-n`` options (``-nv -nd -np -nc -nH``): ``-n[a-zA-Z]+``."""
    return len(text) > 2 and text.startswith("-n") and all(c in chars.LETTERS for c in text[2:])
