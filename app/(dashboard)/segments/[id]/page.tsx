import type { Metadata } from "next";
import { SegmentDetail } from "./segment-detail";

export const metadata: Metadata = { title: "Segmento" };

export default async function SegmentPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <SegmentDetail id={decodeURIComponent(id)} />;
}
