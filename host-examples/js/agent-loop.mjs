#!/usr/bin/env node
// A scripted agent loop showing where failmem's output goes in an
// OpenAI-style `messages` array. No network: the "model" is a script.
//
//   node agent-loop.mjs
//
// The four places:
//   1. `recent-failures`: part of the SYSTEM prompt, rebuilt before every call.
//      It is empty until the first compaction (the failures are still in the
//      history until then).
//   2. `recovery`: after a failed tool call, a TRANSIENT user message sent with
//      the next call only. It is never appended to `messages`.
//   3. `nudge`: on a `nudge` verdict, also transient, sent with the next call.
//   4. `stop`: end the turn. Show `verdict.sentinel` (JSON) to the UI and wait
//      for a person; resume only if `verdict.canContinue`.

import { Session } from './failmem.mjs';

const BASE_SYSTEM = 'You are a coding agent. Use the tools to fix the failing build.';

// What the scripted model does on each call: one tool call and its result.
const SCRIPT = [
  { tool: 'bash', args: { command: 'cargo build' }, output: 'error[E0425]: cannot find value `cfg` in this scope\n --> src/main.rs:4:13', exitCode: 101 },
  { tool: 'read_file', args: { path: 'src/main.rs' }, output: 'fn main() {\n    let c = load();\n    run(cfg);\n}', exitCode: 0 },
  { tool: 'bash', args: { command: 'cargo build' }, output: 'error[E0425]: cannot find value `cfg` in this scope\n --> src/main.rs:4:13', exitCode: 101 },
  { tool: 'bash', args: { command: 'cargo build' }, output: 'error[E0425]: cannot find value `cfg` in this scope\n --> src/main.rs:4:13', exitCode: 101 },
  { tool: 'bash', args: { command: 'cargo build' }, output: 'error[E0425]: cannot find value `cfg` in this scope\n --> src/main.rs:4:13', exitCode: 101 },
  { tool: 'bash', args: { command: 'cargo build' }, output: 'error[E0425]: cannot find value `cfg` in this scope\n --> src/main.rs:4:13', exitCode: 101 },
];

/** Pretends to be the model: returns the next scripted tool call. */
function callModel(request, i) {
  const roles = request
    .map((m) => (transientMessages.has(m) ? `${m.role}*` : m.role === 'system' && m.content !== BASE_SYSTEM ? 'system+recent-failures' : m.role))
    .join(' ');
  console.log(`\n→ model call ${i + 1}: [${roles}]   (* = transient, not kept in history)`);
  const { tool, args } = SCRIPT[i];
  return { role: 'assistant', content: null, tool_calls: [{ id: `call_${i + 1}`, type: 'function', function: { name: tool, arguments: JSON.stringify(args) } }] };
}

const session = Session.create({ breakerThreshold: 4, streakThreshold: 3 });
/** The conversation history that persists between calls. */
const messages = [{ role: 'user', content: 'The build is broken; please fix it.' }];
/** Messages for the next call only (recovery, nudge). */
let transient = [];
/** Only to mark transient messages in this demo's log. */
const transientMessages = new WeakSet();
const transientUser = (content) => {
  const message = { role: 'user', content };
  transientMessages.add(message);
  return message;
};

try {
  for (let i = 0; i < SCRIPT.length; i++) {
    if (i === 2) {
      // The host summarized the history to save context. From now on the
      // earlier failures are gone from `messages`, so `recent-failures`
      // renders into the system prompt.
      const ledger = session.render('compaction-ledger'); // hand this to the summarizer
      messages.splice(0, messages.length, { role: 'user', content: `Summary of earlier work:\n${ledger}` });
      session.compacted();
      console.log('\n── compaction: history summarized; recent-failures now renders ──');
    }

    // 1. The system prompt carries recent-failures (empty before a compaction).
    const recent = session.render('recent-failures');
    const system = { role: 'system', content: recent ? `${BASE_SYSTEM}\n\n${recent}` : BASE_SYSTEM };
    const request = [system, ...messages, ...transient];
    transient = []; // recovery and nudge are shown once, never kept

    const reply = callModel(request, i);
    messages.push(reply);
    const call = reply.tool_calls[0];
    const { output, exitCode } = SCRIPT[i];
    messages.push({ role: 'tool', tool_call_id: call.id, content: output });

    const report = session.observe({ tool: call.function.name, args: call.function.arguments, output, exitCode });
    const { classification: c, verdict } = report;
    console.log(`  ${call.function.name}: ${c.category ?? 'ok'} → ${verdict.action}${c.description ? ` (${c.description})` : ''}`);

    // 2. After a failure, a transient recovery message for the next call.
    if (c.category !== undefined) {
      transient.push(transientUser(session.render('recovery')));
    }
    // 3. On nudge, the nudge block joins it.
    if (verdict.action === 'nudge') {
      transient.push(transientUser(session.render('nudge')));
      console.log(`  ↳ nudge: ${verdict.reason}`);
    }
    // 4. On stop, end the turn and show the sentinel to the UI.
    if (verdict.action === 'stop') {
      console.log(`  ↳ STOP: ${verdict.reason}`);
      console.log(`  UI sentinel: ${verdict.sentinel}`);
      const sentinel = JSON.parse(verdict.sentinel ?? '{}'); // {kind, failure_kinds, count, escalated, can_continue}
      console.log(`  UI shows: "${sentinel.kind}" card, ${sentinel.count} failures of ${sentinel.failure_kinds.join(', ')}`);
      console.log(verdict.canContinue ? '  The user may tell the agent to go on.' : '  The session must not go on unattended.');
      break;
    }
    session.turn();
  }
  const st = session.stats();
  console.log(`\nsession: ${st.steps} steps, ${st.failures} failures, ${st.nudges} nudges, ${st.stops} stops; history kept ${messages.length} messages`);
} finally {
  session.dispose();
}
