// receiver: a strict OTLP/HTTP JSON receiver for hwemu's tests.
// Decodes every POST to /v1/metrics and /v1/logs with the official OTLP protobuf definitions
// (the generated protobufjs root of @opentelemetry/otlp-transformer): the JSON is converted
// to the protobuf message, encoded to the wire format, decoded back, and converted to JSON again
// with 64-bit integers as strings and enums as numbers. The result must equal the request
// (fields at their default value aside): an unknown or misspelled field, a 64-bit integer sent
// as a JSON number, an enum sent as a name, a wrong type anywhere is a decode error. A decode
// error, or a Content-Type other than exactly "application/json", is answered 400 and recorded.
//
// Usage: node receiver.js PORT LOGFILE
//   Every request becomes one JSON line in LOGFILE:
//   {"path", "contentType", "status", "body" (the decoded request) | "error", "seq", "t" (ms)}
//   GET /script?path=/v1/metrics&statuses=503,200&retryAfter=1 makes the next requests to that
//   path answer those statuses in turn (then 200); retryAfter adds Retry-After to 429/503.
//   GET /reset clears the scripts.
'use strict';
const fs = require('fs');
const http = require('http');
const { opentelemetry } = require('@opentelemetry/otlp-transformer/build/src/generated/root');

const types = {
  '/v1/metrics': opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest,
  '/v1/logs': opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest,
};
const [port, logfile] = [Number(process.argv[2]), process.argv[3]];
let scripts = {};
let retryAfter = {};
let seq = 0;

// Fields at their proto3 default are optional on the wire: drop them on both sides.
function strip(v) {
  if (Array.isArray(v)) {
    const a = v.map(strip);
    return a.length ? a : undefined;
  }
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) {
      const s = strip(v[k]);
      if (s !== undefined) o[k] = s;
    }
    return Object.keys(o).length ? o : undefined;
  }
  if (v === 0 || v === '0' || v === '' || v === false || v === null) return undefined;
  return v;
}

// Keeps oneof members set to a default (asDouble: 0 is a value, not an absent field).
function keepOneofs(v) {
  if (Array.isArray(v)) return v.map(keepOneofs);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v)) {
      if (['asDouble', 'asInt', 'doubleValue', 'intValue', 'boolValue', 'stringValue'].includes(k) &&
          (v[k] === 0 || v[k] === '0' || v[k] === false || v[k] === '')) o[k] = `set:${v[k]}`;
      else o[k] = keepOneofs(v[k]);
    }
    return o;
  }
  return v;
}

function decode(type, text) {
  const json = JSON.parse(text);
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new Error('body is not a JSON object');
  const err = type.verify(type.fromObject(json));
  if (err) throw new Error(`verify: ${err}`);
  const wire = type.encode(type.fromObject(json)).finish();
  const back = type.toObject(type.decode(wire), { longs: String, enums: Number, bytes: String });
  const a = JSON.stringify(strip(keepOneofs(json))), b = JSON.stringify(strip(keepOneofs(back)));
  if (a !== b) {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    throw new Error(`not OTLP JSON: the protobuf round trip differs at ...${a.slice(Math.max(0, i - 80), i + 80)}... ` +
                    `(decoded: ...${b.slice(Math.max(0, i - 80), i + 80)}...)`);
  }
  return back;
}

function record(o) {
  o.seq = seq++;
  fs.appendFileSync(logfile, JSON.stringify(o) + '\n');
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (req.method === 'GET' && url.pathname === '/script') {
    const p = url.searchParams.get('path');
    scripts[p] = (url.searchParams.get('statuses') || '').split(',').filter(Boolean).map(Number);
    retryAfter[p] = url.searchParams.get('retryAfter');
    res.end('ok\n');
    return;
  }
  if (req.method === 'GET' && url.pathname === '/reset') {
    scripts = {};
    retryAfter = {};
    res.end('ok\n');
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const path = url.pathname, ct = req.headers['content-type'];
    const type = types[path];
    const entry = { path, contentType: ct, userAgent: req.headers['user-agent'], t: Date.now() };
    for (const h of Object.keys(req.headers)) if (h.startsWith('x-')) entry[h] = req.headers[h];
    let status = 200;
    if (req.method !== 'POST' || !type) {
      status = 404;
      entry.error = `unexpected ${req.method} ${path}`;
    } else if (ct !== 'application/json') {
      status = 400;
      entry.error = `Content-Type is ${JSON.stringify(ct)}, not exactly "application/json"`;
    } else {
      try {
        entry.body = decode(type, Buffer.concat(chunks).toString('utf8'));
      } catch (e) {
        status = 400;
        entry.error = `decode: ${e.message}`;
      }
    }
    if (status === 200 && scripts[path] && scripts[path].length) status = scripts[path].shift();
    entry.status = status;
    record(entry);
    const headers = { 'Content-Type': 'application/json' };
    if ((status === 503 || status === 429) && retryAfter[path]) headers['Retry-After'] = retryAfter[path];
    res.writeHead(status, headers);
    res.end(status === 200 ? '{}' : JSON.stringify({ code: 3, message: entry.error || `scripted ${status}` }));
  });
});
server.listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
