import type { AnyMessageType } from "../../../../server/campaigns/schema";
import { messageTypeLabel } from "../../../_lib/format";

/** What the composer holds while the user types; the preview renders it and submit turns it into an API body. */
export type CampaignKind = AnyMessageType;

export const campaignKinds: { kind: CampaignKind; label: string }[] = (Object.keys(messageTypeLabel) as CampaignKind[]).map((kind) => ({
  kind,
  label: messageTypeLabel[kind],
}));

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

export interface PollOptionDraft {
  key: number;
  text: string;
}

export interface MessageDraft {
  kind: CampaignKind;
  /** The text, a caption, the carousel's message, or a poll's question (Pergunta). */
  message: string;
  media_url: string;
  file_name: string;
  cards: CardDraft[];
  mention_all: boolean;
  link_preview: boolean;
  /** A poll's options (Opções) and whether a voter may choose several. */
  poll_options: PollOptionDraft[];
  multiple_answers: boolean;
}

let lastKey = 0;
/** React keys for cards and buttons the user adds and removes. */
export const newKey = () => ++lastKey;

export const emptyCard = (): CardDraft => ({ key: newKey(), image_url: "", text: "", buttons: [] });
export const emptyPollOption = (): PollOptionDraft => ({ key: newKey(), text: "" });
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
