import { describe, expect, it } from 'vitest';
import { collectUrls, extractCashtags, extractHashtags, extractMentions, extractUrls } from '../../src/api-client/text-entities.ts';

// Each extractor skips texts without the character its pattern needs; these texts have only the
// less common spelling of it (full-width ＃, an upper-case scheme, a URL only in an entity).
describe('text entities', () => {
  it('reads a full-width ＃ hashtag, and none from a text without # or ＃', () => {
    expect(extractHashtags('launch ＃Rust２０２６ today')).toEqual(['rust２０２６']);
    expect(extractHashtags('no tags here, 100% sure')).toEqual([]);
    expect(extractHashtags('#123 is not a tag, #a1 is')).toEqual(['a1']);
  });

  it('reads cashtags, mentions and URLs when their character is present, nothing otherwise', () => {
    expect(extractCashtags('buy $tsla and $BRK.B, not US$5')).toEqual(['TSLA', 'BRK.B']);
    expect(extractCashtags('no money')).toEqual([]);
    expect(extractMentions('hi @Bob_X and @carol, mail a@b.c')).toEqual(['bob_x', 'carol']);
    expect(extractMentions('no handles')).toEqual([]);
    expect(extractUrls('see HTTPS://Example.com/x. and http://a.b/c)')).toEqual(['HTTPS://Example.com/x', 'http://a.b/c']);
    expect(extractUrls('example.com without a scheme')).toEqual([]);
  });

  it('takes no mention, hashtag or cashtag from inside a link (production sends links expanded)', () => {
    const text = 'Watch https://www.tiktok.com/@nasa/video/7301 and https://www.youtube.com/@NatGeo/videos #wildlife, see https://docs.example.org/#Setup or https://x.example/?q=$TSLA cc @carol $BRK.B';
    expect(extractMentions(text)).toEqual(['carol']);
    expect(extractHashtags(text)).toEqual(['wildlife']);
    expect(extractCashtags(text)).toEqual(['BRK.B']);
    // The links themselves are still read whole.
    expect(extractUrls(text)).toContain('https://www.tiktok.com/@nasa/video/7301');
  });

  it("keeps a link's own closing parenthesis and drops the sentence's", () => {
    expect(extractUrls('see https://en.wikipedia.org/wiki/Mercury_(planet) now')).toEqual(['https://en.wikipedia.org/wiki/Mercury_(planet)']);
    expect(extractUrls('(see https://en.wikipedia.org/wiki/Mercury_(planet)).')).toEqual(['https://en.wikipedia.org/wiki/Mercury_(planet)']);
    expect(extractUrls('(at https://a.example/b).')).toEqual(['https://a.example/b']);
  });

  it("collects an entity's link when the text has none, and drops media addresses", () => {
    const entities = [
      { type: 'url', link: 'https://shared.example/a', preview: null },
      { type: 'photo', link: 'https://pbs.example/1.jpg', preview: null },
    ];
    expect(collectUrls('plain text', entities)).toEqual(['https://shared.example/a']);
    expect(collectUrls('look https://pbs.example/1.jpg', entities)).toEqual(['https://shared.example/a']);
    expect(collectUrls('look https://x.example/1', [])).toEqual(['https://x.example/1']);
  });
});
