"""A CPU-bound pure-Python workload for bench/real_programs.sh: python3 busy.py SECONDS runs
rounds of ordinary interpreter work (a tokenizer and recursive-descent evaluator, a class
hierarchy with method calls, dict and string churn, sorting with key functions, generators,
a recursive permutation search) until the process has used SECONDS of CPU time. Measured in
CPU time, not wall time, so a profile at a fixed sampling frequency gets the same number of
samples on a busy machine as on an idle one."""
import sys
import time


def tokenize(text):
    number = ""
    for ch in text:
        if ch.isdigit():
            number += ch
            continue
        if number:
            yield int(number)
            number = ""
        if ch in "+-*/()":
            yield ch
    if number:
        yield int(number)


class Parser:
    def __init__(self, tokens):
        self.tokens = list(tokens)
        self.at = 0

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self):
        token = self.tokens[self.at]
        self.at += 1
        return token

    def expression(self):
        value = self.term()
        while self.peek() in ("+", "-"):
            value = value + self.term() if self.take() == "+" else value - self.term()
        return value

    def term(self):
        value = self.factor()
        while self.peek() in ("*", "/"):
            if self.take() == "*":
                value *= self.factor()
            else:
                divisor = self.factor()
                value = value // divisor if divisor else value
        return value

    def factor(self):
        if self.peek() == "(":
            self.take()
            value = self.expression()
            self.take()
            return value
        return self.take()


def make_expression(seed, depth):
    if depth == 0:
        return str(seed % 97 + 1)
    op = "+-*/"[seed % 4]
    return f"({make_expression(seed * 7 + 3, depth - 1)}{op}{make_expression(seed * 13 + 5, depth - 1)})"


class Shape:
    def area(self):
        raise NotImplementedError

    def describe(self):
        return f"{type(self).__name__}:{self.area():.2f}"


class Rect(Shape):
    def __init__(self, w, h):
        self.w, self.h = w, h

    def area(self):
        return self.w * self.h


class Circle(Shape):
    def __init__(self, r):
        self.r = r

    def area(self):
        return 3.14159 * self.r * self.r


def shapes_round(n):
    shapes = [Rect(i % 17, i % 5 + 1) if i % 3 else Circle(i % 11) for i in range(n)]
    shapes.sort(key=lambda s: (s.area(), s.describe()))
    return sum(len(s.describe()) for s in shapes)


def word_counts(n):
    counts = {}
    for i in range(n):
        word = "w" + format(i * 2654435761 % 4096, "x")
        counts[word] = counts.get(word, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]


def queens(n, row=0, cols=(), diag1=(), diag2=()):
    if row == n:
        return 1
    found = 0
    for col in range(n):
        if col in cols or row + col in diag1 or row - col in diag2:
            continue
        found += queens(n, row + 1, cols + (col,), diag1 + (row + col,), diag2 + (row - col,))
    return found


def primes(limit):
    return (n for n in range(2, limit) if all(n % d for d in range(2, int(n ** 0.5) + 1)))


def one_round(seed):
    total = Parser(tokenize(make_expression(seed, 7))).expression()
    total += shapes_round(400)
    total += len(word_counts(3000))
    total += queens(6)
    total += sum(primes(2000))
    return total


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: busy.py SECONDS (of CPU time)")
    seconds = float(sys.argv[1])
    seed = rounds = 0
    while time.process_time() < seconds:
        seed = (seed + one_round(seed)) % 1000003
        rounds += 1
    print(f"{rounds} rounds, checksum {seed}")


main()
