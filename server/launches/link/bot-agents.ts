/**
 * Link-preview fetchers and crawlers (docs/decisions.md#launches, "The link"): they get the Open Graph
 * page and are not counted. They announce themselves in User-Agent. In-app browsers are people: Instagram's
 * ("… Instagram 312.0 …") and Facebook's ("[FBAN/FBIOS;FBAV/…]") never carry these tokens; Instagram's
 * own previews arrive as facebookexternalhit.
 */
const previewFetchers = [
  "WhatsApp/",
  "facebookexternalhit",
  "Facebot",
  "TelegramBot",
  "Twitterbot",
  "Slackbot",
  "Slack-ImgProxy",
  "Discordbot",
  "Googlebot",
  "Google-InspectionTool",
  "AdsBot-Google",
  "bingbot",
  "BingPreview",
  "LinkedInBot",
  "Applebot",
  "Pinterestbot",
  "redditbot",
  "SkypeUriPreview",
  "Iframely",
  "Embedly",
  "vkShare",
  "YandexBot",
  "DuckDuckBot",
  "Baiduspider",
  "Snap URL Preview",
  "MicrosoftPreview",
  "Mastodon/",
] as const;

const pattern = new RegExp(previewFetchers.map((t) => t.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|"), "i");

export function isLinkPreviewBot(userAgent: string | undefined): boolean {
  return userAgent !== undefined && pattern.test(userAgent);
}
