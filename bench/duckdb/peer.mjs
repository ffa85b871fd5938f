// The DuckDB peer of kmkit's benchmark program (bench/duckdb/main.go). It reads one JSON
// command per line on stdin and answers each with one JSON line on stdout:
//
//   {"op":"open","threads":2}                    start an in-memory database
//   {"op":"load","dir":D,"tables":[{"name":N,"columns":[[COL,TYPE],...]}]}
//                                                CREATE TABLE N from D/N.csv, typed as given;
//                                                answers the time taken and the memory after
//   {"op":"query","sql":S,"n":K}                 runs S once to warm up, then K times; answers
//                                                the time and CPU time (of the whole process,
//                                                DuckDB's threads included) of the first run
//                                                and of each later run, and the first run's rows
//   {"op":"memory"}                              the process's resident set and its peak
//
// Times are measured here, around the DuckDB calls, so the pipe to the Go program does not
// count. A query's time includes reading its whole result into JavaScript values, as the
// kmkit handler's time includes encoding its page.
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

let instance;
let conn;

function memory() {
  // VmRSS and VmHWM (the peak) from /proc, in bytes; process.memoryUsage elsewhere.
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)[1]) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    const rss = process.memoryUsage().rss;
    return { rss, peak: rss };
  }
}

function quote(s) {
  return "'" + String(s).replaceAll("'", "''") + "'";
}

function ident(s) {
  return '"' + String(s).replaceAll('"', '""') + '"';
}

// rowsOf reads a whole result as JSON-ready arrays (BIGINT and DECIMAL arrive as strings,
// dates as YYYY-MM-DD).
function rowsOf(reader) {
  return reader.getRowsJson();
}

async function handle(cmd) {
  switch (cmd.op) {
    case 'open': {
      const before = memory();
      instance = await DuckDBInstance.create(':memory:', { threads: String(cmd.threads) });
      conn = await instance.connect();
      return { before };
    }
    case 'load': {
      const start = process.hrtime.bigint();
      for (const t of cmd.tables) {
        const cols = t.columns.map(([name, type]) => `${quote(name)}: ${quote(type)}`).join(', ');
        const file = `${cmd.dir}/${t.name}.csv`;
        await conn.run(
          `CREATE TABLE ${ident(t.name)} AS SELECT * FROM read_csv(${quote(file)}, header = true, ` +
            `columns = {${cols}}, dateformat = '%Y-%m-%d')`,
        );
      }
      const ns = Number(process.hrtime.bigint() - start);
      return { ns, ...memory() };
    }
    case 'query': {
      const run = async () => {
        const start = process.hrtime.bigint();
        const cpu0 = process.cpuUsage();
        const rows = rowsOf(await conn.runAndReadAll(cmd.sql));
        const cpu = process.cpuUsage(cpu0);
        return { ns: Number(process.hrtime.bigint() - start), cpu: (cpu.user + cpu.system) * 1000, rows };
      };
      const first = await run();
      const ns = [];
      const cpu = [];
      for (let i = 0; i < cmd.n; i++) {
        const r = await run();
        ns.push(r.ns);
        cpu.push(r.cpu);
      }
      return { first: { ns: first.ns, cpu: first.cpu }, ns, cpu, rows: first.rows };
    }
    case 'memory':
      return memory();
    default:
      throw new Error(`unknown op ${cmd.op}`);
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === '') continue;
  let answer;
  try {
    answer = await handle(JSON.parse(line));
  } catch (e) {
    answer = { error: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}
