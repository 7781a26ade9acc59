/**
 * Small HTTP helpers: the error every route throws, JSON answers, body reading and the parsing of
 * identifiers (handles, ids, links) shared by the v2 and v3 routes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Answered as `{message}` with its status. */
export class SimHttpError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = 'SimHttpError';
    this.status = status;
  }
}

export const badRequest = (message: string): SimHttpError => new SimHttpError(400, message);
export const notFound = (message: string): SimHttpError => new SimHttpError(404, message);

const INT_MARK = '\u0000int:';
// JSON.stringify writes the NUL of the mark as the six characters \u0000.
const INT_MARK_RE = /"\\u0000int:(\d+)"/g;

/**
 * A whole number written into the JSON answer as bare digits, exact even above 2^53 (where a JS
 * number would round): production's int64 cursors. Node 20 has no JSON.rawJSON, so it is
 * serialised as a marked string that sendJson unwraps.
 */
export class JsonInteger {
  readonly digits: string;

  constructor(digits: string) {
    if (!/^\d+$/.test(digits)) throw new Error(`not a whole number: ${digits}`);
    this.digits = digits;
  }

  toJSON(): string {
    return `${INT_MARK}${this.digits}`;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  let text = JSON.stringify(body);
  if (text.includes('\\u0000int:')) text = text.replace(INT_MARK_RE, '$1');
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Request bodies are capped: nothing the service accepts comes near 1 MB. */
const MAX_BODY_BYTES = 1 << 20;

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new SimHttpError(413, 'request body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  if (address === '::1') return true;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

const HANDLE_RE = /^[A-Za-z0-9_]{1,15}$/;
const ID_RE = /^[0-9]{1,20}$/;
const HOSTS = '(?:https?://)?(?:www\\.|mobile\\.)?(?:x|twitter)\\.com';
const TWEET_LINK_RE = new RegExp(`^${HOSTS}/(?:[A-Za-z0-9_]{1,15}|i/web|i)/status(?:es)?/([0-9]{1,20})(?:[/?#].*)?$`);
const PROFILE_LINK_RE = new RegExp(`^${HOSTS}/([A-Za-z0-9_]{1,15})/?(?:[?#].*)?$`);
const LIST_LINK_RE = new RegExp(`^${HOSTS}/i/lists/([0-9]{1,20})/?(?:[/?#].*)?$`);
const COMMUNITY_LINK_RE = new RegExp(`^${HOSTS}/i/communities/([0-9]{1,20})/?(?:[/?#].*)?$`);
const SPACE_LINK_RE = new RegExp(`^${HOSTS}/i/spaces/([A-Za-z0-9]{1,32})/?(?:[/?#].*)?$`);

export function isHandle(value: string): boolean {
  return HANDLE_RE.test(value);
}

export function isNumericId(value: string): boolean {
  return ID_RE.test(value);
}

/** A tweet id from a tweet URL or a bare id; 400 otherwise. */
export function tweetIdFromLink(value: string, field: string): string {
  const v = value.trim();
  if (ID_RE.test(v)) return v;
  const m = TWEET_LINK_RE.exec(v);
  if (!m?.[1]) throw badRequest(`${field} must be a tweet URL or a numeric tweet id`);
  return m[1];
}

/** A handle from a profile URL; 400 otherwise. */
export function handleFromProfileLink(value: string, field: string): string {
  const m = PROFILE_LINK_RE.exec(value.trim());
  if (!m?.[1] || m[1] === 'i') throw badRequest(`${field} must be a profile URL such as https://x.com/handle`);
  return m[1];
}

function idFromLinkOrId(value: string, re: RegExp, field: string, what: string): string {
  const v = value.trim();
  if (ID_RE.test(v)) return v;
  const m = re.exec(v);
  if (!m?.[1]) throw badRequest(`${field} must be a ${what} URL or a numeric ${what} id`);
  return m[1];
}

export const listIdFromLink = (v: string, field: string): string => idFromLinkOrId(v, LIST_LINK_RE, field, 'list');
export const communityIdFromLink = (v: string, field: string): string =>
  idFromLinkOrId(v, COMMUNITY_LINK_RE, field, 'community');

export function spaceIdFromLink(value: string, field: string): string {
  const m = SPACE_LINK_RE.exec(value.trim());
  if (!m?.[1]) throw badRequest(`${field} must be a space URL such as https://x.com/i/spaces/<id>`);
  return m[1];
}
