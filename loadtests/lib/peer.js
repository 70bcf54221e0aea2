// The peer requests: one row by id, 10 rows by a range on an indexed number, create, update and
// delete, as a guest, spoken either to our Appwrite API or to PocketBase's REST API with the same
// ids, payloads and result sizes (loadtests/runner/peers.py seeds both sides).
//
// Environment: PEER_TARGET appwrite (default) | pocketbase; PEER_ROWS seeded rows n = 0..PEER_ROWS-1
// with ids peer00000000000..; PEER_DATABASE/PEER_TABLE (default bench/peer); BASE_URL, PROJECT_ID.
import http from 'k6/http';
import { BASE_URL, PROJECT_ID } from './appwrite.js';

export const TARGET = __ENV.PEER_TARGET || 'appwrite';
export const ROWS = parseInt(__ENV.PEER_ROWS || '1000', 10);
const DB = __ENV.PEER_DATABASE || 'bench';
const TABLE = __ENV.PEER_TABLE || 'peer';
const PB = TARGET === 'pocketbase';
if (!PB && TARGET !== 'appwrite') throw new Error(`PEER_TARGET must be appwrite or pocketbase, got ${TARGET}`);

const ROWS_URL = PB ? `${BASE_URL}/api/collections/${TABLE}/records`
  : `${BASE_URL}/v1/tablesdb/${DB}/tables/${TABLE}/rows`;
const HEADERS = PB ? { 'Content-Type': 'application/json' }
  : { 'Content-Type': 'application/json', 'X-Appwrite-Project': PROJECT_ID };

// Expected statuses per operation (Appwrite answers a create with 201, PocketBase with 200).
export const STATUS = { read: 200, list: 200, create: PB ? 200 : 201, update: 200, remove: 204 };

export function peerId(i) {
  return `peer${String(i).padStart(11, '0')}`;
}

export function randomRow() {
  return Math.floor(Math.random() * ROWS);
}

function params(name) {
  return { headers: HEADERS, tags: { name } };
}

export function read(id) {
  return http.get(`${ROWS_URL}/${id}`, params('peer read'));
}

// The 10 rows with lo <= n < lo + 10, without a total count on either side.
export function list(lo) {
  const hi = lo + 10;
  let query;
  if (PB) {
    query = `filter=${encodeURIComponent(`(n>=${lo} && n<${hi})`)}&perPage=10&skipTotal=1`;
  } else {
    const q = [
      { method: 'greaterThanEqual', attribute: 'n', values: [lo] },
      { method: 'lessThan', attribute: 'n', values: [hi] },
      { method: 'limit', values: [10] },
    ];
    query = q.map((x, i) => `queries[${i}]=${encodeURIComponent(JSON.stringify(x))}`).join('&') + '&total=false';
  }
  return http.get(`${ROWS_URL}?${query}`, params('peer list'));
}

export function listedCount(res) {
  const body = res.json();
  return (PB ? body.items : body.rows).length;
}

// Created rows get n = -1, outside the listed range, so list results keep their size.
export function create(title) {
  const data = { title, n: -1 };
  const body = PB ? data : { rowId: 'unique()', data };
  return http.post(ROWS_URL, JSON.stringify(body), params('peer create'));
}

export function createdId(res) {
  return res.json(PB ? 'id' : '$id');
}

export function update(id, title) {
  const data = { title };
  return http.patch(`${ROWS_URL}/${id}`, JSON.stringify(PB ? data : { data }), params('peer update'));
}

export function remove(id) {
  return http.del(`${ROWS_URL}/${id}`, null, params('peer delete'));
}
