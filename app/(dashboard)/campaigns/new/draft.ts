/** What the composer holds while the user types; the preview renders it and submit turns it into an API body. */
export type CampaignKind = "text" | "image" | "video" | "audio" | "document" | "carousel";

export const campaignKinds: { kind: CampaignKind; label: string }[] = [
  { kind: "text", label: "Texto" },
  { kind: "image", label: "Imagem" },
  { kind: "video", label: "Vídeo" },
  { kind: "audio", label: "Áudio" },
  { kind: "document", label: "Documento" },
  { kind: "carousel", label: "Carrossel" },
];

/** API limits of a carousel (server/campaigns/schema.ts). */
export const carouselLimits = { cards: 4, buttonsPerCard: 2, buttonLabel: 25, cardText: 1024, message: 4096 } as const;

export interface ButtonDraft {
  key: number;
  label: string;
  url: string;
}

export interface CardDraft {
  key: number;
  image_url: string;
  text: string;
  buttons: ButtonDraft[];
}

export interface MessageDraft {
  kind: CampaignKind;
  message: string;
  media_url: string;
  file_name: string;
  cards: CardDraft[];
  mention_all: boolean;
  link_preview: boolean;
}

let lastKey = 0;
/** React keys for cards and buttons the user adds and removes. */
export const newKey = () => ++lastKey;

export const emptyCard = (): CardDraft => ({ key: newKey(), image_url: "", text: "", buttons: [] });
export const emptyButton = (): ButtonDraft => ({ key: newKey(), label: "", url: "" });

/** The last path segment of a URL, as a chat app names an attachment ("promo.jpg"). */
export function fileNameFromUrl(url: string): string {
  const value = url.trim();
  if (!value) return "";
  try {
    const last = new URL(value).pathname.split("/").filter(Boolean).pop();
    return last ? decodeURIComponent(last) : new URL(value).hostname;
  } catch {
    return value.split(/[?#]/)[0].split("/").filter(Boolean).pop() ?? value;
  }
}
