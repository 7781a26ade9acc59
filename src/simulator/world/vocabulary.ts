/**
 * Fixed word stock of the generated world. It does not depend on the seed, so search terms and
 * celebrity handles are the same in every world and tests can name them.
 */

const EN = `the a to and of in is it you that for on with this be are was have at my just not so what
all we can but like your from they new will one about get out more now up today time people good day
love know how see first think great really make back going still year world best need want last
game music news market city team night week life work home still never always thing free big little
right better watch video thanks happy photo story read live play show school food morning release
update data price open power future team fans season coach match goal vote policy report plan build
code ship design product startup stock trade crypto energy climate rain storm summer autumn winter
travel flight train street art book film movie song album tour ticket concert stage light dark amazing
wow honestly literally finally huge small early late fast slow strong weak happy sad angry tired`;

const ES = `el la de que y en los se del las un por con no una su para es al lo como más pero sus le ya o
este sí porque esta entre cuando muy sin sobre también me hasta hay donde quien desde todo nos durante
todos uno les ni contra otros ese eso ante ellos hoy mañana gracias amigos fútbol música ciudad vida`;

const FR = `le la les de des du un une et est en que qui dans pour pas sur au avec il elle ce se plus par
nous vous mais ou comme tout bien très aujourd'hui demain merci amis musique ville vie travail match`;

const DE = `der die das und ist nicht ein eine zu den mit von sich auf für im dem es auch an als wie aber
noch nach bei aus wir ihr sie heute morgen danke freunde musik stadt leben arbeit spiel wetter`;

const PT = `o a os as de do da em um uma e que não para com por mais como mas ao ele ela seu sua hoje
amanhã obrigado amigos música cidade vida trabalho jogo tempo bom dia noite muito bem`;

const JA = `今日 明日 東京 ありがとう 音楽 ゲーム 天気 仕事 友達 映画 写真 ニュース 最高 楽しい 新しい 美味しい
ラーメン 桜 電車 週末 発売 配信 ライブ 応援 感謝 本当に すごい かわいい`;

const UND = `😂 🔥 ❤️ 👍 🙏 ✨ 😭 🎉 !!! ... lol 100 2026 ok 👀 💯 ✅ ⚡ 🌧️ ☕`;

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tas', 'vor', 'el', 'qu', 'zin', 'pra', 'dum', 'shi', 'bel', 'tor', 'nix', 'ga'];

function words(block: string): string[] {
  return block.split(/\s+/).filter((w) => w.length > 0);
}

/** Made-up words for the long tail, so rare-term searches find a handful of tweets. */
function syntheticWords(n: number): string[] {
  const out: string[] = [];
  for (let k = 0; out.length < n; k++) {
    const a = SYLLABLES[k % 16] ?? '';
    const b = SYLLABLES[(k >> 4) % 16] ?? '';
    const c = k >= 256 ? (SYLLABLES[(k >> 8) % 16] ?? '') : '';
    out.push(a + b + c);
  }
  return out;
}

export const LANG_WORDS: Readonly<Record<string, readonly string[]>> = {
  en: [...words(EN), ...syntheticWords(1500)],
  es: words(ES),
  fr: words(FR),
  de: words(DE),
  pt: words(PT),
  ja: words(JA),
  und: words(UND),
};

/** Primary languages of users and their shares; 'und' is chosen per tweet instead. */
export const USER_LANGS: readonly [string, number][] = [
  ['en', 0.66], ['es', 0.09], ['fr', 0.05], ['de', 0.04], ['ja', 0.08], ['pt', 0.08],
];

/** Frequent terms: each lands in ~7% of tweets, so a search yields 60k+ hits in the large world. */
export const SEARCH_TERMS: readonly string[] = ['coffee', 'weather', 'launch', '#breaking'];

export const HASHTAGS: readonly string[] = words(`AI Music NFL Python Climate WorldCup Election Crypto Bitcoin
  Gaming Anime Travel Foodie Photography JavaScript TypeScript OpenSource Startup Marketing Health Fitness
  Science Space NASA Art Books Movies TV Fashion Coffee Monday FridayFeeling ThrowbackThursday Tokyo Paris
  Berlin Madrid Lisboa Rain Autumn Halloween`);

export const CASHTAGS: readonly string[] = ['AAPL', 'TSLA', 'BTC', 'ETH', 'NVDA', 'MSFT', 'AMZN', 'GOOG', 'SPY', 'META'];

/** Always users 0..5: public, verified, and mentioned in about a tenth of all tweets. */
export const CELEBRITIES: readonly string[] = ['popstar_daily', 'newsdesk', 'hoopsworld', 'techoracle', 'chefmarta', 'astro_lina'];

export const FIRST_NAMES: readonly string[] = words(`Ana Ben Carla Dev Emma Felix Gina Hugo Iris Jon Kai Lena Marco Nina
  Omar Paula Quinn Rosa Sam Tara Umar Vera Will Xena Yuki Zoe Ali Bea Chen Dana Eli Fay Gus Hana Ivo Jade Kenji
  Lou Mia Nils Olga Pia Raj Sara Tom Uli Vic Wen Yara`);

export const LAST_NAMES: readonly string[] = words(`Smith Garcia Martin Muller Silva Sato Rossi Dubois Kim Nguyen Lopez
  Weber Costa Tanaka Bianchi Moreau Park Tran Diaz Fischer Santos Suzuki Romano Laurent Lee Pham Ruiz Wagner
  Oliveira Ito Greco Bernard Choi Hoang Torres Becker Souza Kato Conti Petit`);

export const LOCATIONS: readonly string[] = ['', '', 'New York, NY', 'London', 'Madrid', 'Paris', 'Berlin', 'Tokyo',
  'São Paulo', 'Lisboa', 'Toronto', 'Sydney', 'Austin, TX', 'Mexico City', 'Osaka', 'somewhere on earth'];

export const SOURCES: readonly [string, number][] = [
  ['Twitter for iPhone', 0.38], ['Twitter for Android', 0.3], ['Twitter Web App', 0.22], ['TweetDeck', 0.03],
  ['Buffer', 0.02], ['Hootsuite Inc.', 0.02], ['IFTTT', 0.015], ['Twitter for iPad', 0.015],
];

export const LINK_DOMAINS: readonly string[] = ['news.example.com', 'blog.example.org', 'www.example.net',
  'shop.example.com', 'github.com', 'youtu.be', 'medium.com', 'en.wikipedia.org'];

export const TOPICS: readonly string[] = ['Tech news', 'Football', 'Indie music', 'Climate science', 'Crypto traders',
  'Home cooking', 'Space fans', 'Photography', 'Open source', 'Anime club', 'Local politics', 'Book club'];
