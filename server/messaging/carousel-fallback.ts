import type { CarouselCard } from "./provider";

/**
 * docs/decisions.md#carousel: a gateway that cannot send carousels (or buttons) to groups sends one image
 * message per card, in card order, its caption the card's text followed by the button links. The
 * carousel's own text opens the first caption.
 */
export function carouselFallback(text: string, cards: CarouselCard[]): { mediaUrl: string; caption: string }[] {
  return cards.map((card, i) => {
    const links = card.buttons.map((b) => `${b.label}: ${b.url}`).join("\n");
    const caption = [i === 0 ? text.trim() : "", card.text.trim(), links].filter(Boolean).join("\n\n");
    return { mediaUrl: card.image_url, caption };
  });
}
