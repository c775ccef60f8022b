#!/usr/bin/env python3
"""Fails when a source file in src/ grows past 900 lines or a class reaches 40 members.

The two limits of docs/conventions.md ("Size limits"):
- a file under src/ (.h, .cc, .cpp, .hpp) has at most MAX_FILE_LINES lines;
- a class, struct or union defined under src/ has fewer than MAX_CLASS_MEMBERS members.

How members are counted: every declaration at the top level of the class body
that is a data member or a member function. A data member declaration with
several declarators (`int a_, b_;`) counts once per declarator; static members,
constructors, destructors, operators, pure virtuals, overrides and defaulted
functions all count, each overload once. Not counted: access labels, nested
types (they are classes of their own and are counted as such), enumerators,
`using`/`typedef`, `friend`, `static_assert` and `= delete`d functions (they
declare that something does not exist).

How the classes are found: a brace-depth scanner, not a compiler. Comments,
string and character literals (raw strings too) and preprocessor lines are
blanked first; then every `class|struct|union Name ... {` that is a definition
has its body split into top-level declarations (a `{...}` followed by `;` or
`,` is an initializer or a nested type and stays in the declaration; any other
`{...}` is a function body and ends it). All-caps macro calls
(`GUARDED_BY(mu_)`, `EXCLUDES(mu_)`) are dropped before a declaration is
classified, so annotations do not turn a data member into a function. It needs
no build and runs in well under a second; it can be fooled by macro-generated
members, which src/ does not use.

Exceptions live in scripts/check-size-allow.txt, one per line with its reason:
`path:<glob>` exempts matching files from the line limit and the classes
defined in them from the member limit; `class:<Name>` exempts one class. An
entry that no longer matches a violation is reported so it can be deleted.

Usage: scripts/check-size.py [REPO_ROOT]   exit 0 when clean, 1 on a new violation.
"""
import fnmatch
import os
import re
import sys

MAX_FILE_LINES = 900
MAX_CLASS_MEMBERS = 40  # a class must stay under this
EXTENSIONS = (".h", ".cc", ".cpp", ".hpp")
ALLOW_FILE = os.path.join("scripts", "check-size-allow.txt")

IDENT = re.compile(r"[A-Za-z_]\w*")
CLASS_HEAD = re.compile(r"\b(class|struct|union)\b")
ATTRIBUTES = re.compile(r"\[\[.*?\]\]|\balignas\s*\([^()]*\)")
MACRO_CALL = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\s*\((?:[^()]|\([^()]*\))*\)")
ACCESS_LABEL = re.compile(r"^\s*(public|private|protected)\s*:(?!:)")
TEMPLATE_PREFIX = re.compile(r"^\s*template\s*<")


def blank_non_code(text):
    """Returns text with comments, literals and preprocessor lines turned to spaces.

    Newlines are kept, so offsets map to the same line numbers.
    """
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A directive, with its backslash continuations.
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and not _ident_before(text, i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2 : j]))
            i = j
        elif c == '"' or (c == "'" and not _digit_separator(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident_before(text, i):
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_") and not text[i - 1] in "uU8L"


def _digit_separator(text, i):
    """`'` inside a number literal such as 1'000'000."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "._"):
        j -= 1
    return j < i and text[j].isdigit()


def matching(text, open_at):
    """Index of the brace closing the one at open_at (len(text) when unbalanced)."""
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(text)


def class_definitions(code):
    """Yields (name, body_start, body_end) for every class/struct/union definition."""
    for m in CLASS_HEAD.finditer(code):
        before = code[: m.start()].rstrip()
        if before.endswith("enum") or re.search(r"(<|,)\s*$", before) and _in_template_params(before):
            continue
        rest_at = m.end()
        brace = _definition_brace(code, rest_at)
        if brace is None:
            continue
        head = ATTRIBUTES.sub(" ", code[rest_at:brace])
        name_m = re.match(r"\s*((?:\w+::)*\w+)", head)
        name = name_m.group(1) if name_m and name_m.group(1) != "final" else "<anonymous>"
        yield name, brace + 1, matching(code, brace)


def _in_template_params(before):
    """Whether the keyword follows `template <` or a `,` inside one (a type parameter)."""
    depth = 0
    for k in range(len(before) - 1, -1, -1):
        ch = before[k]
        if ch == ">":
            depth += 1
        elif ch == "<":
            if depth == 0:
                return re.search(r"template\s*$", before[:k]) is not None
            depth -= 1
        elif ch in ";{}":
            return False
    return False


def _definition_brace(code, at):
    """The `{` opening a class body after the keyword at `at`, or None for a non-definition."""
    head = ATTRIBUTES.sub(lambda m: " " * len(m.group(0)), code[at : at + 2000])
    for k, ch in enumerate(head):
        if ch == "{":
            return at + k
        if ch in ";()=*&[]}":
            return None
    return None


def top_level_declarations(body):
    """Splits a class body into its top-level declarations, nested braces reduced to {}."""
    decls, current = [], []
    k, n = 0, len(body)
    paren = 0
    while k < n:
        ch = body[k]
        if ch == "(":
            paren += 1
        elif ch == ")":
            paren = max(0, paren - 1)
        if ch == "{":
            close = matching(body, k)
            nested = body[k : close + 1]
            after = body[close + 1 :].lstrip()
            is_type = re.match(r"\s*(template\s*<.*>\s*)?(class|struct|union|enum)\b", "".join(current))
            current.append("{" + (nested if is_type else "") + "}")
            k = close + 1
            if paren == 0 and not (after.startswith(";") or after.startswith(",")):
                decls.append("".join(current))
                current = []
            continue
        if ch == ";" and paren == 0:
            decls.append("".join(current))
            current = []
        elif ch == ":" and paren == 0 and ACCESS_LABEL.match("".join(current) + ":"):
            current = []
        else:
            current.append(ch)
        k += 1
    decls.append("".join(current))
    return [" ".join(d.split()) for d in decls if d.strip()]


def members_of(decl):
    """How many members one top-level declaration declares (0 for a non-member)."""
    d = ACCESS_LABEL.sub("", decl).strip()
    if TEMPLATE_PREFIX.match(d):
        d = _drop_template_prefix(d)
    first = IDENT.match(d)
    word = first.group(0) if first else ""
    if word in ("using", "typedef", "friend", "static_assert") or not word and not d.startswith("~"):
        return 0
    if word in ("class", "struct", "union", "enum"):
        # A nested type (counted as a class of its own) or its forward declaration.
        if "{" in d or re.fullmatch(r"(class|struct|union|enum)( class| struct)? [\w:]+( : [\w:]+)?", d):
            return 0
    d = MACRO_CALL.sub(" ", d)
    if re.search(r"=\s*delete\b", d):
        return 0
    # Up to the initializer: `= ...` or `{...}` at the top level.
    angle = paren = 0
    commas = 0
    k = 0
    while k < len(d):
        ch = d[k]
        if d.startswith("operator", k) and (k == 0 or not (d[k - 1].isalnum() or d[k - 1] == "_")):
            return 1
        if ch == "<":
            angle += 1
        elif ch == ">" and angle > 0:
            angle -= 1
        elif ch == "(":
            if angle == 0 and paren == 0:
                return 1  # the parameter list of a member function
            paren += 1
        elif ch == ")":
            paren = max(0, paren - 1)
        elif ch == "," and angle == 0 and paren == 0:
            commas += 1
        elif (ch == "=" or ch == "{") and angle == 0 and paren == 0:
            # An initializer: later declarators still count (int a_ = 1, b_ = 2).
            commas += _top_level_commas(d[k + 1 :])
            break
        k += 1
    return commas + 1


def _top_level_commas(text):
    depth = 0
    count = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            count += 1
    return count


def _drop_template_prefix(d):
    depth = 0
    start = d.index("<")
    for k in range(start, len(d)):
        if d[k] == "<":
            depth += 1
        elif d[k] == ">":
            depth -= 1
            if depth == 0:
                return d[k + 1 :].strip()
    return d


def scan_file(path):
    """Returns (line count, [(class name, line, members)])."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    code = blank_non_code(text)
    classes = []
    for name, start, end in class_definitions(code):
        members = sum(members_of(d) for d in top_level_declarations(code[start:end]))
        classes.append((name, code.count("\n", 0, start) + 1, members))
    return lines, classes


def read_allow(path):
    """Returns [(kind, pattern, reason, line number)]; exits on an entry without a reason."""
    entries = []
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            target, _, reason = line.partition(" -- ")
            kind, _, pattern = target.strip().partition(":")
            if kind not in ("path", "class") or not pattern or not reason.strip():
                sys.exit(f"{path}:{number}: want `path:<glob> -- reason` or `class:<Name> -- reason`")
            entries.append((kind, pattern.strip(), reason.strip(), number))
    return entries


def allowed_by(entries, path, class_name=None):
    for entry in entries:
        kind, pattern = entry[0], entry[1]
        if kind == "path" and fnmatch.fnmatch(path, pattern):
            return entry
        if kind == "class" and class_name is not None and (
            class_name == pattern or class_name.split("::")[-1] == pattern):
            return entry
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    os.chdir(root)
    entries = read_allow(ALLOW_FILE)
    used = set()
    new, allowed = [], []
    biggest_file, biggest_class = ("", 0), ("", 0)
    for folder, _, files in sorted(os.walk("src")):
        for name in sorted(files):
            if not name.endswith(EXTENSIONS):
                continue
            path = os.path.join(folder, name).replace(os.sep, "/")
            lines, classes = scan_file(path)
            if lines > biggest_file[1]:
                biggest_file = (path, lines)
            if lines > MAX_FILE_LINES:
                finding = f"{path}: {lines} lines (limit {MAX_FILE_LINES})"
                entry = allowed_by(entries, path)
                (allowed if entry else new).append((finding, entry))
                if entry:
                    used.add(entry[3])
            for class_name, line, members in classes:
                if members > biggest_class[1]:
                    biggest_class = (f"{class_name} ({path}:{line})", members)
                if members >= MAX_CLASS_MEMBERS:
                    finding = f"{path}:{line}: class {class_name} has {members} members (limit: under {MAX_CLASS_MEMBERS})"
                    entry = allowed_by(entries, path, class_name)
                    (allowed if entry else new).append((finding, entry))
                    if entry:
                        used.add(entry[3])
    print(f"check-size: biggest file {biggest_file[0]} ({biggest_file[1]} lines), "
          f"biggest class {biggest_class[0]} ({biggest_class[1]} members)")
    for finding, entry in allowed:
        print(f"  allowed  {finding}  [{ALLOW_FILE}:{entry[3]}: {entry[2]}]")
    for kind, pattern, _, number in entries:
        if number not in used:
            print(f"  unused   {ALLOW_FILE}:{number} {kind}:{pattern} matches no violation; delete it")
    for finding, _ in new:
        print(f"  NEW      {finding}")
    if new:
        print(f"check-size: {len(new)} violation(s); split the file or class "
              "(docs/conventions.md, Size limits)")
        return 1
    print("check-size: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
