// Serves host/policy's BenchmarkRedact64K: runs the npm package redact-pii over the same chunks
// the benchmark measures Redact on. It reads commands from stdin, one a line, "N MODE": redact
// N chunks, round robin, with all of redact-pii's built-in rules (MODE "all") or only those
// with a Halo counterpart (MODE "comparable": SSN, credit card, email, phone, IP address,
// credentials); and answers each with one line of JSON: {"ns": wall time, "cpuNs": CPU time,
// "bytes": bytes redacted, "ops": N}. First it redacts every chunk once with each redactor,
// untimed, so the JIT has warmed up, and then says {"ready": true}.
//
// usage: node bench.js PACKAGE_DIR CHUNKS.json
//   PACKAGE_DIR  where scripts/setup-test-deps.sh installed it (.cache/npm/redact-pii)
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const [dir, file] = process.argv.slice(2);
const { SyncRedactor } = require(path.join(path.resolve(dir), 'node_modules', 'redact-pii'));
const chunks = JSON.parse(fs.readFileSync(file, 'utf8'));
const off = { enabled: false };
const redactors = {
  all: new SyncRedactor(),
  comparable: new SyncRedactor({ builtInRedactors: { names: off, streetAddress: off, zipcode: off, url: off, digits: off, username: off, password: off } }),
};

let sink = 0;
for (const r of Object.values(redactors)) {
  for (const c of chunks) sink += r.redact(c).length;
}

process.stdout.write(JSON.stringify({ ready: true }) + '\n');
const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [n, mode] = line.trim().split(/\s+/);
  const r = redactors[mode];
  const ops = Number(n);
  if (!r || !(ops > 0)) {
    process.stdout.write(JSON.stringify({ error: `bad command ${JSON.stringify(line)}` }) + '\n');
    return;
  }
  let bytes = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) {
    const c = chunks[i % chunks.length];
    sink += r.redact(c).length;
    bytes += Buffer.byteLength(c, 'utf8');
  }
  const ns = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({ ns, cpuNs: (cpu.user + cpu.system) * 1000, bytes, ops, sink: sink > 0 }) + '\n');
});
