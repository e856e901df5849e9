"""Field-by-field comparison of two nvidia-smi outputs of the same node at the same tick: the
real nvidia-smi 535 on the node's NVML, and fakesmi's nvidia-smi (tests/cli/test_nvml.sh).
  smi_compare.py csv REAL FAKE     --query-gpu CSV: the same header, every cell equal
  smi_compare.py q REAL FAKE       -q: every "section/label : value" both print is equal (the
                                   two tools' layouts differ: 535 and 590 label some lines
                                   differently; the keys both have must number at least 40)
  smi_compare.py table REAL FAKE   the summary table: the three rows of every GPU, cell by
                                   cell as whitespace-separated words, and the version line's
                                   driver and CUDA versions
Prints each difference and exits 1 when there is one."""
import re
import sys


def csv_cells(text):
    rows = [line.split(", ") for line in text.rstrip("\n").split("\n")]
    return rows[0], rows[1:]


def q_pairs(text):
    pairs, stack = {}, []
    for line in text.split("\n"):
        if not line.strip() or line.startswith("="):
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 4
        body = line.strip()
        stack = stack[:depth]
        if " : " in line:
            label, value = line.split(" : ", 1)
            pairs["/".join(stack + [label.strip()])] = value.strip()
        else:
            stack.append(body)
    pairs.pop("Timestamp", None)
    return pairs


def table_rows(text):
    """GPU blocks: the three lines after each rule, as lists of cells of words."""
    lines = text.split("\n")
    version = [l for l in lines if "Driver Version:" in l]
    ver = re.findall(r"(Driver Version|CUDA Version): *(\S+)", version[0]) if version else []
    gpus = []
    for i, line in enumerate(lines):
        if re.match(r"^\|\s+\d+\s+\S", line) and i + 2 < len(lines):
            block = [[cell.split() for cell in row.strip("|").split("|")] for row in lines[i:i + 3]]
            gpus.append(block)
    return ver, gpus


def main():
    mode, real_path, fake_path = sys.argv[1:4]
    real, fake = open(real_path).read(), open(fake_path).read()
    diffs = []
    if mode == "csv":
        rh, rrows = csv_cells(real)
        fh, frows = csv_cells(fake)
        if rh != fh:
            diffs.append(f"header: real {rh} / fakesmi {fh}")
        if len(rrows) != len(frows):
            diffs.append(f"rows: real {len(rrows)} / fakesmi {len(frows)}")
        for g, (r, f) in enumerate(zip(rrows, frows)):
            for name, a, b in zip(rh, r, f):
                if a != b:
                    diffs.append(f"GPU row {g} {name}: real {a!r} / fakesmi {b!r}")
    elif mode == "q":
        r, f = q_pairs(real), q_pairs(fake)
        common = sorted(set(r) & set(f))
        if len(common) < 40:
            diffs.append(f"only {len(common)} keys in common")
        diffs += [f"{k}: real {r[k]!r} / fakesmi {f[k]!r}" for k in common if r[k] != f[k]]
        print(f"smi_compare: {len(common)} -q values compared")
    elif mode == "table":
        rv, rg = table_rows(real)
        fv, fg = table_rows(fake)
        if rv != fv or not rv:
            diffs.append(f"versions: real {rv} / fakesmi {fv}")
        if len(rg) != len(fg) or not rg:
            diffs.append(f"GPU blocks: real {len(rg)} / fakesmi {len(fg)}")
        for g, (a, b) in enumerate(zip(rg, fg)):
            if a != b:
                diffs.append(f"GPU block {g}: real {a} / fakesmi {b}")
    for d in diffs:
        print("smi_compare:", d)
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
