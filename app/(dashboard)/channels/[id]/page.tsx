import type { Metadata } from "next";
import { ChannelDetail } from "./channel-detail";

export const metadata: Metadata = { title: "Canal" };

export default async function ChannelPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <ChannelDetail id={decodeURIComponent(id)} />;
}
