// iso.cjs times isomorphic-git on a generated tree for bench/snapshot:
// add + commit of the whole tree after changing files, and checkout of the
// previous and the new commit. It prints one JSON object on stdout.
//
// usage: node iso.cjs NODE_DIR REPO_DIR FILES_JSON ROUNDS CHANGED
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const [nodeDir, dir, filesJSON, roundsArg, changedArg] = process.argv.slice(2);
const git = require(path.join(nodeDir, 'node_modules', 'isomorphic-git'));
const files = JSON.parse(fs.readFileSync(filesJSON, 'utf8'));
const rounds = Number(roundsArg);
const changed = Number(changedArg);
const author = { name: 'bench', email: 'bench@localhost', timestamp: 1700000000, timezoneOffset: 0 };
const cache = {};

// pick is the same choice of files as the Go side makes.
function pick(round, i) {
  return files[(round * 7919 + i * 104729) % files.length];
}

function modify(round) {
  for (let i = 0; i < changed; i++) {
    const p = path.join(dir, pick(round, i));
    const size = fs.statSync(p).size;
    const text = crypto.randomBytes(Math.ceil(size * 3 / 4) + 3).toString('base64').slice(0, size);
    fs.writeFileSync(p, text);
  }
}

async function save(msg) {
  await git.add({ fs, dir, filepath: '.', cache });
  return git.commit({ fs, dir, message: msg, author, cache });
}

function ms(start) {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

(async () => {
  const out = { first_save_ms: 0, save_ms: [], checkout_ms: [] };
  await git.init({ fs, dir, defaultBranch: 'main' });
  let t = process.hrtime.bigint();
  await save('initial');
  out.first_save_ms = ms(t);
  await git.tag({ fs, dir, ref: 't0' });
  for (let r = 1; r <= rounds; r++) {
    modify(r);
    t = process.hrtime.bigint();
    await save('round ' + r);
    out.save_ms.push(ms(t));
    await git.tag({ fs, dir, ref: 't' + r });
    t = process.hrtime.bigint();
    await git.checkout({ fs, dir, ref: 't' + (r - 1), force: true, cache });
    out.checkout_ms.push(ms(t));
    t = process.hrtime.bigint();
    await git.checkout({ fs, dir, ref: 't' + r, force: true, cache });
    out.checkout_ms.push(ms(t));
  }
  process.stdout.write(JSON.stringify(out) + '\n');
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
