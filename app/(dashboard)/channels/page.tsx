import type { Metadata } from "next";
import { Channels } from "./channels";

export const metadata: Metadata = { title: "Canais" };

export default function ChannelsPage() {
  return <Channels />;
}
