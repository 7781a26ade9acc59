import { tweetIdAt } from '../model.ts';
import type { Rng } from './random.ts';
import type { MutableUser } from './sim-world.ts';
import { CELEBRITIES, FIRST_NAMES, LAST_NAMES, LOCATIONS, USER_LANGS } from './vocabulary.ts';

/** Per-user generation facts that are not part of SimUser. */
export interface UserTraits {
  /** Relative tweeting activity (heavy-tailed). */
  readonly activity: Float64Array;
  /** Index into USER_LANGS. */
  readonly lang: Uint8Array;
  /** Index into SOURCES. */
  readonly source: Uint8Array;
}

const DAY_MS = 86_400_000;

/** Shuffled indices from `from` on; the state mix is drawn from it so minimum counts are exact. */
function shuffledFrom(rng: Rng, from: number, n: number): number[] {
  const out = Array.from({ length: Math.max(0, n - from) }, (_, k) => k + from);
  for (let k = out.length - 1; k > 0; k--) {
    const j = rng.int(0, k);
    [out[k], out[j]] = [out[j] ?? 0, out[k] ?? 0];
  }
  return out;
}

function pickShare<T>(rng: Rng, shares: readonly (readonly [T, number])[]): number {
  let r = rng.next();
  for (let k = 0; k < shares.length; k++) {
    r -= shares[k]?.[1] ?? 0;
    if (r < 0) return k;
  }
  return 0;
}

function uniqueHandle(rng: Rng, first: string, last: string, taken: Set<string>): string {
  const styles = [`${first}${last}`, `${first}_${last}`, `${first.toLowerCase()}${last.slice(0, 3).toLowerCase()}`, `the${first}`];
  for (let attempt = 0; ; attempt++) {
    const base = rng.pick(styles).slice(0, attempt === 0 ? 15 : 11);
    const handle = attempt === 0 ? base : `${base}${rng.int(1, 9999)}`;
    if (!taken.has(handle.toLowerCase())) {
      taken.add(handle.toLowerCase());
      return handle;
    }
  }
}

export function generateUsers(rng: Rng, count: number, startMs: number): { users: MutableUser[]; traits: UserTraits } {
  const n = Math.max(count, CELEBRITIES.length + 12);
  const taken = new Set(CELEBRITIES.map((h) => h.toLowerCase()));
  const ids = new Set<string>();
  const traits: UserTraits = { activity: new Float64Array(n), lang: new Uint8Array(n), source: new Uint8Array(n) };
  const users: MutableUser[] = [];
  for (let i = 0; i < n; i++) {
    const celebrity = CELEBRITIES[i];
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    const username = celebrity ?? uniqueHandle(rng, first, last, taken);
    const createdAtMs = Date.UTC(2008, 0, 1) + Math.floor(rng.next() * (startMs - 30 * DAY_MS - Date.UTC(2008, 0, 1)));
    // Accounts since 2013 carry time-based ids (> 2^53); older ones small sequential-looking ids.
    let id = createdAtMs >= Date.UTC(2013, 0, 1) && rng.chance(0.7)
      ? tweetIdAt(createdAtMs, rng.int(0, 4095)).toString()
      : String(rng.int(12, 1_500_000_000));
    while (ids.has(id)) id = String(BigInt(id) + 1n);
    ids.add(id);
    traits.activity[i] = celebrity ? 40 : rng.heavy(1, 3000, 1.3);
    traits.lang[i] = celebrity ? 0 : pickShare(rng, USER_LANGS);
    traits.source[i] = rng.int(0, 7);
    users.push({
      index: i,
      id,
      username,
      displayName: celebrity ? celebrity.replace(/_/g, ' ') : `${first} ${last}`,
      description: rng.chance(0.8) ? `${rng.pick(['Writer', 'Dev', 'Fan', 'Student', 'Chef', 'Analyst', 'Runner'])} · ${rng.pick(LOCATIONS) || 'online'}` : '',
      location: rng.pick(LOCATIONS),
      createdAtMs,
      protected: false,
      suspended: false,
      deleted: false,
      verified: celebrity !== undefined || rng.chance(0.03),
      blueVerified: celebrity !== undefined || rng.chance(0.15),
      canDm: rng.chance(0.4),
      possiblySensitive: rng.chance(0.02),
      followersCount: 0,
      followingsCount: 0,
      favouritesCount: rng.heavy(0, 200_000, 0.8),
      mediaCount: 0,
      tweetsCount: 0,
      bioUrls: rng.chance(0.2) ? [`https://example.com/~${username.toLowerCase()}`] : [],
      pinnedTweetIds: [],
      profileImageUrl: `https://pbs.twimg.com/profile_images/${id}/${username}_normal.jpg`,
      profileBackgroundImageUrl: rng.chance(0.5) ? `https://pbs.twimg.com/profile_banners/${id}/1500x500` : '',
    });
  }
  // The hidden states are disjoint and never hit the celebrities, with at least three of each.
  const order = shuffledFrom(rng, CELEBRITIES.length, n);
  const quota = (share: number): number => Math.max(3, Math.round(share * n));
  let at = 0;
  for (const [state, share] of [['protected', 0.05], ['suspended', 0.02], ['deleted', 0.01]] as const) {
    for (let k = quota(share); k > 0; k--) {
      const u = users[order[at++] ?? 0];
      if (u) u[state] = true;
    }
  }
  return { users, traits };
}
