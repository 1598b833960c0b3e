// Runs the npm package redact-pii over the chunks host/policy's BenchmarkRedact64K measures
// Redact on, and prints what it took as JSON: {"ns": wall time, "cpuNs": CPU time, "bytes":
// bytes redacted, "ops": chunks redacted}. Untimed, it first redacts every chunk once (the JIT
// warms up).
//
// usage: node bench.js PACKAGE_DIR CHUNKS.json N [comparable]
//   PACKAGE_DIR  where scripts/setup-test-deps.sh installed it (.cache/npm/redact-pii)
//   N            how many chunks to redact, round robin
//   comparable   keep only the built-in rules that have a Halo counterpart (SSN, credit
//                card, email, phone, IP address, credentials), instead of all of them
'use strict';
const fs = require('fs');
const path = require('path');

const [dir, file, n, mode] = process.argv.slice(2);
const { SyncRedactor } = require(path.join(path.resolve(dir), 'node_modules', 'redact-pii'));
const chunks = JSON.parse(fs.readFileSync(file, 'utf8'));
const off = { enabled: false };
const redactor = mode === 'comparable'
  ? new SyncRedactor({ builtInRedactors: { names: off, streetAddress: off, zipcode: off, url: off, digits: off, username: off, password: off } })
  : new SyncRedactor();

let sink = 0;
for (const c of chunks) sink += redactor.redact(c).length;

const ops = Number(n);
let bytes = 0;
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
for (let i = 0; i < ops; i++) {
  const c = chunks[i % chunks.length];
  sink += redactor.redact(c).length;
  bytes += Buffer.byteLength(c, 'utf8');
}
const ns = Number(process.hrtime.bigint() - t0);
const cpu = process.cpuUsage(cpu0);
process.stdout.write(JSON.stringify({ ns, cpuNs: (cpu.user + cpu.system) * 1000, bytes, ops, sink: sink > 0 }) + '\n');
