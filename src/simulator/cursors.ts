/**
 * Cursors as the production service hands them out: opaque strings of several hundred characters
 * for most listings, numeric-looking strings for followers, follows and list members.
 *
 * Both encode a position plus the number of pages already served (for short pages and the
 * repeating-cursor fault) and are bound to the request they came from (its "scope": endpoint and
 * target), so a cursor replayed against another target, or a garbled one, answers 400.
 *
 * Opaque form: two base-36 digits giving the payload length, the payload (base64url JSON), then a
 * deterministic filler derived from the payload by SHA-256, which doubles as an integrity check.
 */
import { createHash } from 'node:crypto';
import { badRequest } from './http-utils.ts';

export interface CursorPosition {
  /** Offset into a static array. */
  o?: number;
  /** Keyset bound: the last tweet index served (the next page holds older tweets). */
  k?: number;
  /** Opaque state of the search engine. */
  s?: string;
}

export interface CursorState extends CursorPosition {
  /** Pages served before the one this cursor asks for. */
  p: number;
}

export type CursorKind = 'opaque' | 'numeric';

function hash32(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0);
}

function filler(payload: string, length: number): string {
  let out = '';
  let block = payload;
  while (out.length < length) {
    const digest = createHash('sha256').update(block).digest('base64url');
    out += digest;
    block = digest;
  }
  return out.slice(0, length);
}

function encodeOpaque(scope: string, state: CursorState): string {
  const payload = Buffer.from(JSON.stringify({ ...state, h: hash32(scope) })).toString('base64url');
  const len = payload.length.toString(36).padStart(2, '0');
  if (len.length > 2) throw new Error('cursor payload too long');
  // 300 to 427 characters in all, varying with the payload like the real ones do
  const total = 300 + (hash32(payload) % 128);
  return len + payload + filler(payload, Math.max(16, total - payload.length - 2));
}

function decodeOpaque(scope: string, cursor: string): CursorState {
  const len = Number.parseInt(cursor.slice(0, 2), 36);
  if (!Number.isInteger(len) || len <= 0 || cursor.length < 2 + len + 16) throw badRequest('invalid cursor');
  const payload = cursor.slice(2, 2 + len);
  const rest = cursor.slice(2 + len);
  if (rest !== filler(payload, rest.length)) throw badRequest('invalid cursor');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('invalid cursor');
  }
  if (!parsed || typeof parsed !== 'object') throw badRequest('invalid cursor');
  const obj = parsed as Record<string, unknown>;
  if (obj.h !== hash32(scope)) throw badRequest('cursor does not belong to this request');
  const state: CursorState = { p: nonNegInt(obj.p) };
  if (obj.o !== undefined) state.o = nonNegInt(obj.o);
  if (obj.k !== undefined) state.k = nonNegInt(obj.k);
  if (obj.s !== undefined) {
    if (typeof obj.s !== 'string') throw badRequest('invalid cursor');
    state.s = obj.s;
  }
  return state;
}

function nonNegInt(v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw badRequest('invalid cursor');
  return v;
}

// Numeric form: BASE + ((offset * 1000 + pages) * M + scopeCheck). Pages saturate at 999.
const NUM_BASE = 1_600_000_000_000_000_000n;
const NUM_M = 1_000_003n;

function encodeNumeric(scope: string, state: CursorState): string {
  const value = BigInt(state.o ?? 0) * 1000n + BigInt(Math.min(state.p, 999));
  return (NUM_BASE + value * NUM_M + (BigInt(hash32(scope)) % NUM_M)).toString();
}

function decodeNumeric(scope: string, cursor: string): CursorState {
  if (!/^[0-9]{19,30}$/.test(cursor)) throw badRequest('invalid cursor');
  const n = BigInt(cursor) - NUM_BASE;
  if (n < 0n) throw badRequest('invalid cursor');
  if (n % NUM_M !== BigInt(hash32(scope)) % NUM_M) throw badRequest('cursor does not belong to this request');
  const value = n / NUM_M;
  const o = value / 1000n;
  if (o > BigInt(Number.MAX_SAFE_INTEGER)) throw badRequest('invalid cursor');
  return { o: Number(o), p: Number(value % 1000n) };
}

export function encodeCursor(kind: CursorKind, scope: string, state: CursorState): string {
  return kind === 'numeric' ? encodeNumeric(scope, state) : encodeOpaque(scope, state);
}

/** null for no cursor (first page); 400 for anything this simulator did not hand out for this scope. */
export function decodeCursor(kind: CursorKind, scope: string, cursor: string | null | undefined): CursorState | null {
  if (cursor === null || cursor === undefined || cursor === '') return null;
  return kind === 'numeric' ? decodeNumeric(scope, cursor) : decodeOpaque(scope, cursor);
}
