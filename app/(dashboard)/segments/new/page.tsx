import type { Metadata } from "next";
import { NewSegment } from "./new-segment";

export const metadata: Metadata = { title: "Novo segmento" };

export default function NewSegmentPage() {
  return <NewSegment />;
}
