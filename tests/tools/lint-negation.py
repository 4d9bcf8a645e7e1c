#!/usr/bin/python3
"""lint-negation.py: finds shell assertions that cannot fail.

For the test suite (tests/tools/t-lint-tests.sh).  bash applies neither
errexit (set -e) nor any other check to a command whose status is inverted
with '!', nor to one that ends an '&&' list: a statement such as
    ! grep -q ERROR log
or  [ -f x ] && ! grep -q ERROR log
passes whatever grep finds.  An assertion must act on the status itself:
    if grep -q ERROR log; then fail; fi     or     ! grep -q ERROR log || fail

Usage: lint-negation.py FILE...  prints FILE:LINE: TEXT for each such
statement; exit 1 when there is one, 0 when there is none.
"""
import re
import sys

# A '!' that starts a statement: at the line's start or after ';', '{',
# '(', 'then', 'do', 'else', or after an '&&' that is not a condition.
START = re.compile(r'(^|;|\{|\(|\bthen\b|\bdo\b|\belse\b|&&)\s*!\s')
COND = re.compile(r'^\s*(if|elif|while|until)\b')


HEREDOC = re.compile(r"(?<!<)<<-?\s*(['\"]?)(\w+)\1")


def logical_lines(text):
    """(first line number, joined text) of each command line: '\\'
    continuations and lines ending in '&&', '||' or '|' joined, here-document
    bodies left out."""
    buf, first, until = '', None, None
    for n, line in enumerate(text.split('\n'), 1):
        if until is not None:
            if line.strip() == until:
                until = None
            continue
        if first is None:
            first = n
        m = HEREDOC.search(line)
        if m:
            until = m.group(2)
        if line.endswith('\\'):
            buf += line[:-1] + ' '
            continue
        if re.search(r'(&&|\|\||\|)\s*$', line):
            buf += line + ' '
            continue
        yield first, buf + line
        buf, first = '', None


def strip_quoted(s):
    """s with quoted strings blanked, so their ';' '&&' '!' do not count."""
    return re.sub(r"'[^']*'|\"(\\.|[^\"\\])*\"", '""', s)


def bad_statements(text):
    for n, line in logical_lines(text):
        code = strip_quoted(line)
        if code.lstrip().startswith('#'):
            continue
        code = re.sub(r'\s#.*$', '', code)
        if COND.match(code):
            continue
        for m in START.finditer(code):
            rest = code[m.end():]
            stmt = re.split(r';|\bthen\b|\bdo\b', rest)[0]
            if '||' in stmt or '&&' in stmt:
                continue	# the status is acted on
            if m.group(1) == '&&' and re.search(r'\|\|', code[:m.start()]):
                continue
            yield n, line.strip()
            break


def main(paths):
    found = 0
    for p in paths:
        with open(p, encoding='utf-8', errors='replace') as f:
            for n, line in bad_statements(f.read()):
                print(f'{p}:{n}: {line}')
                found += 1
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
