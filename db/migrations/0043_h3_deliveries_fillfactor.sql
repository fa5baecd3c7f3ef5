-- Room on each page for a delivery's later versions: its receipts (acked_at, read_at) and lease renewals then update
-- it in place (HOT: no index entry), and the claim's and sent mark's new versions stay on its page (a smaller WAL record).
ALTER TABLE "deliveries" SET (fillfactor = 50);
