// A CPU-bound JavaScript workload for bench/real_programs.sh: node --perf-basic-prof busy.js
// SECONDS runs rounds of ordinary JIT-compiled work (a tokenizer and recursive-descent
// evaluator, classes with virtual calls, Map and string churn, sorting with comparators,
// closures, a recursive permutation search) until the process has used SECONDS of CPU time,
// so that V8 compiles many functions and writes them to /tmp/perf-PID.map.
"use strict";

function* tokenize(text) {
  let number = "";
  for (const ch of text) {
    if (ch >= "0" && ch <= "9") { number += ch; continue; }
    if (number) { yield Number(number); number = ""; }
    if ("+-*/()".includes(ch)) yield ch;
  }
  if (number) yield Number(number);
}

class Parser {
  constructor(tokens) { this.tokens = [...tokens]; this.at = 0; }
  peek() { return this.at < this.tokens.length ? this.tokens[this.at] : null; }
  take() { return this.tokens[this.at++]; }
  expression() {
    let value = this.term();
    while (this.peek() === "+" || this.peek() === "-") {
      value = this.take() === "+" ? value + this.term() : value - this.term();
    }
    return value;
  }
  term() {
    let value = this.factor();
    while (this.peek() === "*" || this.peek() === "/") {
      if (this.take() === "*") value = (value * this.factor()) % 1000003;
      else { const d = this.factor(); value = d ? Math.trunc(value / d) : value; }
    }
    return value;
  }
  factor() {
    if (this.peek() === "(") { this.take(); const v = this.expression(); this.take(); return v; }
    return this.take();
  }
}

function makeExpression(seed, depth) {
  if (depth === 0) return String((seed % 97) + 1);
  const op = "+-*/"[seed % 4];
  return `(${makeExpression((seed * 7 + 3) % 1000003, depth - 1)}${op}${makeExpression((seed * 13 + 5) % 1000003, depth - 1)})`;
}

class Shape { describe() { return `${this.constructor.name}:${this.area().toFixed(2)}`; } }
class Rect extends Shape { constructor(w, h) { super(); this.w = w; this.h = h; } area() { return this.w * this.h; } }
class Circle extends Shape { constructor(r) { super(); this.r = r; } area() { return 3.14159 * this.r * this.r; } }

function shapesRound(n) {
  const shapes = [];
  for (let i = 0; i < n; i++) shapes.push(i % 3 ? new Rect(i % 17, (i % 5) + 1) : new Circle(i % 11));
  shapes.sort((a, b) => a.area() - b.area() || a.describe().localeCompare(b.describe()));
  return shapes.reduce((sum, s) => sum + s.describe().length, 0);
}

function wordCounts(n) {
  const counts = new Map();
  for (let i = 0; i < n; i++) {
    const word = "w" + ((i * 2654435761) % 4096).toString(16);
    counts.set(word, (counts.get(word) || 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10);
}

function queens(n, row = 0, cols = [], diag1 = [], diag2 = []) {
  if (row === n) return 1;
  let found = 0;
  for (let col = 0; col < n; col++) {
    if (cols.includes(col) || diag1.includes(row + col) || diag2.includes(row - col)) continue;
    found += queens(n, row + 1, [...cols, col], [...diag1, row + col], [...diag2, row - col]);
  }
  return found;
}

function primes(limit) {
  const isPrime = (n) => { for (let d = 2; d * d <= n; d++) if (n % d === 0) return false; return true; };
  let sum = 0;
  for (let n = 2; n < limit; n++) if (isPrime(n)) sum += n;
  return sum;
}

function oneRound(seed) {
  let total = new Parser(tokenize(makeExpression(seed, 7))).expression();
  total += shapesRound(400) + wordCounts(3000).length + queens(6) + primes(2000);
  return total;
}

if (process.argv.length !== 3) { console.error("usage: busy.js SECONDS (of CPU time)"); process.exit(2); }
const seconds = Number(process.argv[2]);
let seed = 0, rounds = 0;
const cpuSeconds = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
while (cpuSeconds() < seconds) { seed = Math.abs(seed + oneRound(seed)) % 1000003; rounds++; }
console.log(`${rounds} rounds, checksum ${seed}`);
