// The driver of scripts/bench-agent.sh: Halo (a real `halo serve` process, warm) beside the
// Vercel AI SDK's generateText (in this process, warm), against one fake OpenAI-compatible
// model (fake-model.mjs, a process of its own), in the same run, in turns.
//
//   node agent.mjs --halo BIN --replay BIN [--rounds 3] [--runs 200] [--long 20]
//
// Measures, each round: a run that offers 20 tool methods (5 declarations: 3 writable
// Workspaces, 2 Bash) and calls none, on Halo and on ai; the same Halo run with tools: none;
// a 40-step run (the model asks for one call per step, each answered with 16 KB) on both;
// and the HTTP floor: the bodies of a Halo 40-step run posted to the fake again with net/http
// alone (internal/benchreplay). Then, in fresh processes, the peak memory (VmHWM, maxRSS) after 50 runs of 0
// steps and after --long runs of 40 steps. Prints min / median / max over the rounds of each
// round's median, the goals' ratios, and a JSON line of everything (for docs/serve.md).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1] && !all[i + 1].startsWith('--') ? all[i + 1] : 'true']);
  return acc;
}, []));
const rounds = Number(args.rounds ?? 3);
const runs = Number(args.runs ?? 200);
const long = Number(args.long ?? 20);
const STEPS = 40;
const result16K = 'export function parseDate(s: string): Date { return new Date(s); }\n'.repeat(300).slice(0, 16 << 10);

// The pinned packages, resolved from the tree scripts/npm-ci.sh installed (HALO_NPM_DIR).
const fromTree = createRequire(path.join(process.env.HALO_NPM_DIR, 'package.json'));
const { generateText, jsonSchema, tool, stepCountIs } = await import(pathToFileURL(fromTree.resolve('ai')));
const { createOpenAICompatible } = await import(pathToFileURL(fromTree.resolve('@ai-sdk/openai-compatible')));

// lineOf starts a child and resolves with the first line of its output that matches re.
function lineOf(child, stream, re) {
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child[stream] });
    rl.on('line', (l) => {
      const m = re.exec(l);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`${child.spawnargs.join(' ')} exited with ${code}`)));
  });
}

const children = [];
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));

// The fake model; the child that measures ai's memory is given the parent's.
let fakeURL = args.fake;
if (!fakeURL) {
  const fake = spawn(process.execPath, [path.join(here, 'fake-model.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(fake);
  fakeURL = await lineOf(fake, 'stdout', /^(http:\S+)/);
}

// The project halo serve serves.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'halo-bench-agent-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
// agent.halo's models are s0 and s40: STEPS is 40.
fs.copyFileSync(path.join(here, 'agent.halo'), path.join(dir, 'flow.halo'));
fs.mkdirSync(path.join(dir, 'src'));
fs.mkdirSync(path.join(dir, 'docs'));
fs.writeFileSync(path.join(dir, 'mocks.json'), JSON.stringify({ 'W1.read': result16K }));

async function startServe() {
  const serve = spawn(args.halo, ['serve', '--addr', '127.0.0.1:0', '--mocks', 'mocks.json', 'flow.halo'], {
    cwd: dir, stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: fakeURL + '/v1', NO_COLOR: '1' },
  });
  children.push(serve);
  const url = await lineOf(serve, 'stderr', /listening: url=(http:\S+)/);
  serve.stderr.resume(); // its request log, read so that its writes never wait
  return { serve, url };
}

// stopServe stops a halo serve and waits for its exit (it holds the run store until then).
function stopServe(serve) {
  const exited = new Promise((resolve) => serve.once('exit', resolve));
  serve.kill('SIGTERM');
  return exited;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(url, body) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function haloRun(url, pipeline) {
  const r = await post(url + '/api/runs?wait=60s', JSON.stringify({ pipeline, inputs: { task: 'the date tests' } }));
  const out = JSON.parse(r.body);
  if (r.status !== 200 || out.status !== 'completed') throw new Error(`halo ${pipeline}: ${r.status} ${r.body.slice(0, 300)}`);
}

const provider = createOpenAICompatible({ name: 'fake', baseURL: fakeURL + '/v1', apiKey: 'sk-bench' });

// aiTools are the 20 functions Halo offered, as ai tools with the same names, descriptions
// and schemas; each answers with the 16 KB result.
async function aiTools() {
  const defs = await new Promise((resolve, reject) => {
    http.get(fakeURL + '/tools', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
    }).on('error', reject);
  });
  if (!defs || defs.length !== 20) throw new Error(`Halo offered ${defs?.length} functions, want 20`);
  const tools = {};
  for (const d of defs) {
    tools[d.function.name] = tool({ description: d.function.description, inputSchema: jsonSchema(d.function.parameters), execute: async () => result16K });
  }
  return tools;
}

async function aiRun(tools, model) {
  const r = await generateText({ model: provider(model), system: undefined, prompt: 'Fix the project: the date tests', tools, stopWhen: stepCountIs(STEPS + 10) });
  if (r.text !== 'done') throw new Error(`ai: ${r.text}`);
}

// timed runs f n times and returns the median wall time of a run in ms; cpu, when given, is
// read before and after (ms of processor time), and its difference per run is pushed to into.
async function timed(n, f, cpu, into) {
  const ms = [];
  const c0 = cpu?.();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f();
    ms.push(performance.now() - t);
  }
  if (cpu) into.push((cpu() - c0) / n);
  return median(ms);
}

// procCPU is the processor time process pid has used, in ms (/proc/PID/stat, in ticks of
// 10 ms: read over many runs). selfCPU is this process's.
function procCPU(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
function selfCPU() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function lastBodies() {
  return new Promise((resolve, reject) => {
    http.get(fakeURL + '/last', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
    }).on('error', reject);
  });
}

function hwm(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) / 1024;
}

if (args['ai-memory']) {
  // A fresh process: the peak memory after 50 runs of 0 steps, then after long 40-step runs.
  const tools = JSON.parse(args['ai-memory']);
  const ts = {};
  for (const d of tools) ts[d.function.name] = tool({ description: d.function.description, inputSchema: jsonSchema(d.function.parameters), execute: async () => result16K });
  for (let i = 0; i < 50; i++) await aiRun(ts, 's0');
  const before = process.resourceUsage().maxRSS / 1024;
  for (let i = 0; i < long; i++) await aiRun(ts, 's' + STEPS);
  console.log(JSON.stringify({ before, after: process.resourceUsage().maxRSS / 1024 }));
  process.exit(0);
}

const { serve, url } = await startServe();
serve.stderr.resume();
// Warm both up, and have Halo offer its tools once, for ai to offer the same.
for (let i = 0; i < 50; i++) {
  await haloRun(url, 'Offer');
  await haloRun(url, 'Bare');
}
const tools = await aiTools();
for (let i = 0; i < 50; i++) await aiRun(tools, 's0');
for (let i = 0; i < 3; i++) {
  await haloRun(url, 'Steps');
  await aiRun(tools, 's' + STEPS);
}

// The HTTP floor: the bodies of a run posted again with net/http alone (internal/benchreplay,
// one keep-alive connection, as either peer keeps one), and the first body alone: the
// difference per step is what the growing requests cost on the wire and in the fake.
const bodyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'halo-bench-bodies-'));
process.on('exit', () => fs.rmSync(bodyDir, { recursive: true, force: true }));
async function floorPerStep(bodies, n) {
  const files = bodies.map((b, i) => {
    const f = path.join(bodyDir, `b${i}.json`);
    fs.writeFileSync(f, b);
    return f;
  });
  const c = spawn(args.replay, ['-n', String(n), fakeURL + '/v1/chat/completions', ...files], { stdio: ['ignore', 'pipe', 'inherit'] });
  const out = JSON.parse(await lineOf(c, 'stdout', /^(\{.*\})$/));
  return (out.all - out.first) / STEPS;
}

const figures = { haloOffer: [], haloBare: [], aiOffer: [], haloSteps: [], aiSteps: [], floorStep: [], haloStep: [], aiStep: [] };
// Processor time per run: halo serve's process (without the driver's HTTP client) and this
// process for ai (all of generateText). The machine's load moves these less than wall time.
const cpu = { haloOffer: [], haloBare: [], aiOffer: [], haloSteps: [], aiSteps: [] };
const serveCPU = () => procCPU(serve.pid);
for (let r = 0; r < rounds; r++) {
  figures.haloOffer.push(await timed(runs, () => haloRun(url, 'Offer'), serveCPU, cpu.haloOffer));
  figures.haloBare.push(await timed(runs, () => haloRun(url, 'Bare'), serveCPU, cpu.haloBare));
  figures.aiOffer.push(await timed(runs, () => aiRun(tools, 's0'), selfCPU, cpu.aiOffer));
  const hs = await timed(long, () => haloRun(url, 'Steps'), serveCPU, cpu.haloSteps);
  const bodies = await lastBodies();
  if (bodies.length !== STEPS + 1) throw new Error(`the fake kept ${bodies.length} bodies of Halo's run`);
  const as = await timed(long, () => aiRun(tools, 's' + STEPS), selfCPU, cpu.aiSteps);
  const floor = await floorPerStep(bodies, long);
  figures.haloSteps.push(hs);
  figures.aiSteps.push(as);
  figures.floorStep.push(floor);
  figures.haloStep.push((hs - figures.haloOffer[r]) / STEPS - floor);
  figures.aiStep.push((as - figures.aiOffer[r]) / STEPS - floor);
  process.stderr.write(`round ${r + 1} of ${rounds} done (load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')})\n`);
}
await stopServe(serve);

// Peak memory, in fresh processes.
const mem = await startServe();
for (let i = 0; i < 50; i++) await haloRun(mem.url, 'Offer');
const haloBefore = hwm(mem.serve.pid);
for (let i = 0; i < long; i++) await haloRun(mem.url, 'Steps');
const haloAfter = hwm(mem.serve.pid);
await stopServe(mem.serve);
const defs = await new Promise((resolve) => http.get(fakeURL + '/tools', (res) => {
  const c = [];
  res.on('data', (x) => c.push(x));
  res.on('end', () => resolve(Buffer.concat(c).toString()));
}));
const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--ai-memory', defs, '--long', String(long), '--fake', fakeURL], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
children.push(child);
const aiMem = JSON.parse(await lineOf(child, 'stdout', /^(\{.*\})$/));

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
};
const fmt = (xs, unit = 'ms', d = 3) => {
  const s = stats(xs);
  return `${s.min.toFixed(d)} / ${s.median.toFixed(d)} / ${s.max.toFixed(d)} ${unit}`;
};
const ratios = (a, b) => a.map((x, i) => x / b[i]);
const out = {
  rounds, runs, long,
  offer: { halo: stats(figures.haloOffer), ai: stats(figures.aiOffer), haloToolsNone: stats(figures.haloBare),
    ratioAi: stats(ratios(figures.haloOffer, figures.aiOffer)), ratioToolsNone: stats(ratios(figures.haloOffer, figures.haloBare)) },
  steps40: { halo: stats(figures.haloSteps), ai: stats(figures.aiSteps), floorPerStep: stats(figures.floorStep),
    haloPerStep: stats(figures.haloStep), aiPerStep: stats(figures.aiStep), ratio: stats(ratios(figures.haloStep, figures.aiStep)) },
  cpuMs: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, stats(v)])),
  memoryMiB: { halo: { before: haloBefore, after: haloAfter, growth: haloAfter - haloBefore },
    ai: { before: aiMem.before, after: aiMem.after, growth: aiMem.after - aiMem.before } },
};
console.log(`min / median / max over ${rounds} rounds of each round's median (${runs} short runs, ${long} long ones a round)`);
console.log(`offers 20 methods, calls none: halo ${fmt(figures.haloOffer)}; ai ${fmt(figures.aiOffer)}; ratio ${fmt(ratios(figures.haloOffer, figures.aiOffer), '×', 2)} (goal ≤ 1.5)`);
console.log(`the same with tools: none (halo): ${fmt(figures.haloBare)}; ratio ${fmt(ratios(figures.haloOffer, figures.haloBare), '×', 2)} (goal ≤ 1.3)`);
console.log(`40 steps: halo ${fmt(figures.haloSteps, 'ms', 1)}; ai ${fmt(figures.aiSteps, 'ms', 1)}; HTTP floor ${fmt(figures.floorStep)} a step`);
console.log(`per step above the floor: halo ${fmt(figures.haloStep)}; ai ${fmt(figures.aiStep)}; ratio ${fmt(ratios(figures.haloStep, figures.aiStep), '×', 2)} (goal ≤ 0.5)`);
console.log(`processor time per run: offer halo ${fmt(cpu.haloOffer)}, ai ${fmt(cpu.aiOffer)}; tools: none halo ${fmt(cpu.haloBare)}; 40 steps halo ${fmt(cpu.haloSteps, 'ms', 1)}, ai ${fmt(cpu.aiSteps, 'ms', 1)}`);
console.log(`peak memory, 0 -> 40 steps: halo ${haloBefore.toFixed(1)} -> ${haloAfter.toFixed(1)} MiB (+${(haloAfter - haloBefore).toFixed(1)}); ai ${aiMem.before.toFixed(1)} -> ${aiMem.after.toFixed(1)} MiB (+${(aiMem.after - aiMem.before).toFixed(1)}) (goal: halo's growth ≤ ai's)`);
console.log(JSON.stringify(out));
process.exit(0);
