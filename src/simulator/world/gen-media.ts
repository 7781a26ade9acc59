import type { SimMedia } from '../model.ts';
import type { Rng } from './random.ts';
import { LINK_DOMAINS } from './vocabulary.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';

export function randomKey(rng: Rng, length: number): string {
  let out = '';
  for (let k = 0; k < length; k++) out += ALPHABET[Math.floor(rng.next() * 62)] ?? 'x';
  return out;
}

/** Media of one tweet: mostly native photos (1..4), some videos and GIFs, a few embedded. */
export function generateMedia(rng: Rng): SimMedia[] {
  const roll = rng.next();
  const type = roll < 0.7 ? 'photo' : roll < 0.9 ? 'video' : 'animated_gif';
  const n = type === 'photo' ? rng.int(1, rng.chance(0.7) ? 1 : 4) : 1;
  const out: SimMedia[] = [];
  for (let k = 0; k < n; k++) {
    const key = randomKey(rng, 15);
    const native = rng.chance(0.85);
    const preview = `https://pbs.twimg.com/${type === 'photo' ? 'media' : 'ext_tw_video_thumb'}/${key}.jpg`;
    let url: string;
    if (!native) url = type === 'photo' ? `https://i.imgur.com/${key}.jpg` : `https://www.youtube.com/watch?v=${key.slice(0, 11)}`;
    else if (type === 'photo') url = `https://pbs.twimg.com/media/${key}.jpg`;
    else if (type === 'video') url = `https://video.twimg.com/ext_tw_video/${key}/pu/vid/1280x720/${key}.mp4`;
    else url = `https://video.twimg.com/tweet_video/${key}.mp4`;
    out.push({ type, native, url, preview });
  }
  return out;
}

/** Shared links: t.co token in the text, expanded URL in the entities. Popular links recur. */
export interface Article {
  readonly short: string;
  readonly expanded: readonly string[];
}

export function generateArticles(rng: Rng, count: number): Article[] {
  const out: Article[] = [];
  for (let k = 0; k < count; k++) {
    const domain = rng.pick(LINK_DOMAINS);
    out.push({
      short: `https://t.co/${randomKey(rng, 10)}`,
      expanded: [`https://${domain}/${rng.pick(['story', 'post', 'p', 'watch', 'wiki'])}/${k + 1}-${randomKey(rng, 6)}`],
    });
  }
  return out;
}
