import { describe, expect, it } from "vitest";
import { isLinkPreviewBot } from "./bot-agents";

/** User-Agent strings as the fetchers and apps send them (docs/decisions.md#launches, "The link"). */
const bots = [
  "WhatsApp/2.23.20.0 A",
  "WhatsApp/2.2407.3 i",
  "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
  "facebookexternalhit/1.1;line-poker/1.0",
  "Mozilla/5.0 (compatible; Facebot/1.0; +https://developers.facebook.com/docs/sharing/webmasters/facebot/)",
  "TelegramBot (like TwitterBot)",
  "Twitterbot/1.0",
  "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
  "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
  "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
  "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
];

const people = [
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 312.0.0.32.112 (iPhone14,5; iOS 17_4; pt_BR; pt; scale=3.00; 1170x2532; 553453683)",
  "Mozilla/5.0 (Linux; Android 14; SM-A546E Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36 Instagram 330.0.0.40.92 Android (34/14; 450dpi; 1080x2340; samsung; SM-A546E; a54x; s5e8835; pt_BR; 598363203)",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/455.0.0.44.105;FBBV/565011458;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.4;FBSS/3;FBID/phone;FBLC/pt_BR;FBOP/5]",
  "Mozilla/5.0 (Linux; Android 14; moto g54 5G Build/U1TDS34.94-12-7-4; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/461.0.0.42.103;]",
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  "Mozilla/5.0 (Linux; Android 13; SM-A136M) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Mobile Safari/537.36 Snapchat/12.85.0.40 (SM-A136M; Android 13#A136MUBS4CWH1#33; gzip; )",
  "Mozilla/5.0 (Linux; Android 13; 2201117TL Build/TKQ1.221114.001; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.113 Mobile Safari/537.36 trill_340203 JsSdk/1.0 NetType/WIFI Channel/googleplay AppName/musical_ly app_version/34.2.3 ByteLocale/pt-BR",
];

describe("isLinkPreviewBot", () => {
  it.each(bots)("a preview fetcher: %s", (ua) => expect(isLinkPreviewBot(ua)).toBe(true));
  it.each(people)("a person (in-app browsers included): %s", (ua) => expect(isLinkPreviewBot(ua)).toBe(false));
  it("no User-Agent is a person (counted; the redirect is what a visitor needs)", () => {
    expect(isLinkPreviewBot(undefined)).toBe(false);
    expect(isLinkPreviewBot("")).toBe(false);
  });
});
