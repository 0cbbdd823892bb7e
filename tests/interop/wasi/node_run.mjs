// Runs a WASI preview 1 module under Node's node:wasi with this process's
// stdin, stdout, stderr, arguments and environment; exits with the
// module's exit code. Usage: node node_run.mjs FILE.wasm [ARGS...]
// (scripts/interop/interop-wasi.sh starts the Python SDK's client on it).
// Node hands the module a non-blocking stdin on a pipe: the crate's
// single-threaded stdio reads it again when a read would block.
import { readFile } from 'node:fs/promises';
import { argv, env, exit } from 'node:process';
import { WASI } from 'node:wasi';

const [file, ...args] = argv.slice(2);
if (!file) {
  console.error('usage: node node_run.mjs FILE.wasm [ARGS...]');
  exit(2);
}
const wasi = new WASI({ version: 'preview1', args: [file, ...args], env, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));
