#!/usr/bin/env python3
"""The man pages and the bash completion of hwemu, made from its --help texts at build time.

    manpages.py HWEMU OUTDIR

runs `HWEMU --help` and `HWEMU <command> --help` for every command the first one lists (its
"Commands:" table is the one list of commands) and writes
    OUTDIR/man1/hwemu.1.gz, OUTDIR/man1/hwemu-<command>.1.gz   one page per command
    OUTDIR/completions/hwemu                                    bash completion (complete -F)
so that neither can disagree with --help: a changed help text changes both at the next build.

The conversion: the Usage lines are the SYNOPSIS; a line of two spaces, an item (an option, a
subcommand) and two or more spaces before its text is a tagged paragraph (.TP), the item's
further, more indented lines kept as lines (.br); a line of two items side by side (the original's
flags of `trace generate`) keeps its block as written (.nf); other text is filled. Every '-' is
written as \\- (a minus, so an option copied from the page works) and hyphenation is off, so the
page shows every option as --help does. The completion offers a command's options (the --long
names of its help's option lines), its subcommands (the table's a|b|c after the command), node
names for --node (the running engine's, <root>/<node>.seg) and files elsewhere; after `--`, commands."""
import gzip
import os
import re
import subprocess
import sys

ITEM = re.compile(r"^  (\S(?:.*?\S)?)(?:\s{2,}(\S.*))?$")
LONG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def run_help(hwemu, args):
    p = subprocess.run([hwemu] + args + ["--help"], capture_output=True, text=True)
    if p.returncode != 0 or not p.stdout.startswith("Usage: "):
        sys.exit("manpages.py: `%s --help` exited %d without a Usage: text: %s"
                 % (" ".join(["hwemu"] + args), p.returncode, p.stderr.strip()))
    return p.stdout


def commands(top):
    """[(name, subcommands, summary)] from the Commands: table of `hwemu --help`."""
    out, inside = [], False
    for line in top.splitlines():
        if line == "Commands:":
            inside = True
            continue
        if inside:
            m = ITEM.match(line)
            if not m:
                break
            words = m.group(1).split()
            subs = words[1].split("|") if len(words) > 1 and re.fullmatch(r"[a-z][a-z|-]*", words[1]) else []
            for name in words[0].split("|"):
                out.append((name, subs, m.group(2) or ""))
    if not out:
        sys.exit("manpages.py: `hwemu --help` lists no commands (no Commands: table)")
    return out


def esc(text):
    """roff text: backslashes, minus signs, a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def usage_and_body(text):
    """The Usage: lines (without "Usage: ") and the lines after them."""
    lines = text.rstrip("\n").split("\n")
    usage = [lines[0][len("Usage: "):]]
    i = 1
    while i < len(lines) and lines[i].startswith(" ") and lines[i].strip():
        usage.append(lines[i].strip())
        i += 1
    return usage, lines[i:]


def two_columns(line):
    m = ITEM.match(line)
    return bool(m and m.group(2) and re.search(r"\s{2,}--", m.group(2)))


def body_roff(lines):
    """The help text after its Usage lines as man(7) requests."""
    out, blocks, cur = [], [], []
    for line in lines + [""]:
        if line.strip():
            cur.append(line)
        elif cur:
            blocks.append(cur)
            cur = []
    for block in blocks:
        if any(two_columns(line) for line in block):
            nofill = False
            for line in block:
                if line.endswith(":") and not line.startswith(" "):
                    out += [".fi"] if nofill else []
                    out.append(".SS " + esc(line[:-1]))
                    nofill = False
                    continue
                if not nofill:
                    out += [".PP", ".nf"]
                    nofill = True
                out.append(esc(line))
            out += [".fi"] if nofill else []
            continue
        out.append(".PP")
        item_indent = None
        for line in block:
            m = ITEM.match(line)
            if line.endswith(":") and not line.startswith(" "):
                out.append(".SS " + esc(line[:-1]))
                item_indent = None
            elif m:
                out += [".TP", "\\fB" + esc(m.group(1)) + "\\fR"]
                if m.group(2):
                    out.append(esc(m.group(2)))
                item_indent = len(line) - len(line.lstrip())
            elif item_indent is not None and line.startswith(" " * (item_indent + 1)):
                out += [".br", esc(line.strip())]
            else:
                if item_indent is not None:
                    out.append(".PP")
                item_indent = None
                out.append(esc(line.strip()))
    return out


def page(name, section_title, summary, usage, body, see_also, version):
    out = ['.TH %s 1 "" "hwemu %s" "hwemu manual"' % (name.upper().replace("-", "\\-"), version),
           ".\\\" Generated by cmake/manpages.py from `%s --help`: do not edit." % name.replace("-", " ", 1),
           ".nh", ".ad l", ".SH NAME", "%s \\- %s" % (esc(name), esc(summary)), ".SH SYNOPSIS", ".nf"]
    out += [esc(u) for u in usage]
    out += [".fi", ".SH " + section_title]
    out += body_roff(body)
    if see_also:
        out += [".SH SEE ALSO", ", ".join("\\fB%s\\fR(1)" % esc(s) for s in see_also)]
    return "\n".join(out) + "\n"


def write_gz(path, text):
    # gzip -9n: no name, no time stamp, so a build repeats bit for bit (Debian's man pages are gzipped)
    with open(path, "wb") as f, gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=f, mtime=0) as g:
        g.write(text.encode())


def option_names(text):
    """The --long names a help text's option lines start with (both columns of a two-column line)."""
    for line in text.splitlines():
        if line.startswith("  -"):
            for column in re.split(r"\s{2,}", line.strip()):
                if column.startswith("-"):
                    yield from LONG.findall(column.split(" (")[0])


def completion(cmds, helps):
    cases = []
    for name, subs, _ in cmds:
        opts = sorted(set(option_names(helps[name])) | {"--help"})
        cases.append("    %s) opts=\"%s\"; subs=\"%s\" ;;" % (name, " ".join(opts), " ".join(subs)))
    names = " ".join(n for n, _, _ in cmds)
    return """# bash completion for hwemu: generated by cmake/manpages.py from `hwemu --help` and each
# command's --help; do not edit.
_hwemu() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=${COMP_WORDS[1]} opts subs i
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "%s --help --version" -- "$cur"))
        return
    fi
    for ((i = 2; i < COMP_CWORD; i++)); do
        if [ "${COMP_WORDS[i]}" = "--" ]; then
            [ $((i + 1)) -eq "$COMP_CWORD" ] && COMPREPLY=($(compgen -c -- "$cur")) ||
                COMPREPLY=($(compgen -f -- "$cur"))
            return
        fi
    done
    case $cmd in
%s
    *) return ;;
    esac
    if [ "$prev" = "--node" ]; then
        local root=${SIM_HWEMU_ROOT:-/dev/shm/hwemu} seg nodes=
        for ((i = 2; i < COMP_CWORD - 1; i++)); do
            [ "${COMP_WORDS[i]}" = "--root" ] && root=${COMP_WORDS[i+1]}
        done
        for seg in "$root"/*.seg; do
            [ -e "$seg" ] && seg=${seg##*/} && nodes+=" ${seg%%.seg}"
        done
        COMPREPLY=($(compgen -W "$nodes" -- "$cur"))
    elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ]; then
        COMPREPLY=($(compgen -W "$subs" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -F _hwemu -o filenames hwemu
""" % (names, "\n".join(cases))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: manpages.py HWEMU OUTDIR")
    hwemu, outdir = sys.argv[1], sys.argv[2]
    version = subprocess.run([hwemu, "--version"], capture_output=True, text=True).stdout.split()[-1]
    top = run_help(hwemu, [])
    cmds = commands(top)
    helps = {name: run_help(hwemu, [name]) for name, _, _ in cmds}
    os.makedirs(os.path.join(outdir, "man1"), exist_ok=True)
    os.makedirs(os.path.join(outdir, "completions"), exist_ok=True)
    usage, body = usage_and_body(top)
    summary = body[1] if len(body) > 1 and body[1] else "hardware emulator for energy-management agents"
    write_gz(os.path.join(outdir, "man1", "hwemu.1.gz"),
             page("hwemu", "DESCRIPTION", summary.rstrip("."), usage, body[2:], ["hwemu-" + n for n, _, _ in cmds],
                  version))
    for name, _, summ in cmds:
        usage, body = usage_and_body(helps[name])
        write_gz(os.path.join(outdir, "man1", "hwemu-%s.1.gz" % name),
                 page("hwemu-" + name, "DESCRIPTION", summ, usage, body, ["hwemu"], version))
    with open(os.path.join(outdir, "completions", "hwemu"), "w") as f:
        f.write(completion(cmds, helps))


if __name__ == "__main__":
    main()
