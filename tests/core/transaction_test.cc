// ResourceTransaction: all-or-nothing admission (the static weight import). Commit hands out every staged
// buffer; rollback frees everything staged, retries rejected frees a bounded number of times, quarantines
// indeterminate ones and hands back the buffers that are still live. Nothing is dropped silently.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ledger_backend.h"
#include "quiesce/core/transaction.h"

namespace quiesce {
namespace {

using testing::LedgerBackend;

class TransactionTest : public ::testing::Test {
 protected:
  TransactionTest() : context_(backend_.create_context(ContextDesc{}).value()) {}

  static BufferDesc desc_of(std::uint64_t bytes) {
    return BufferDesc{.bytes = bytes, .usage = kAllBufferUsage};
  }

  LedgerBackend backend_;
  MemoryBudget budget_{4096};
  Context context_;
};

TEST_F(TransactionTest, EachAllocationAsksForExactlyTheRequestUnderThisTransaction) {
  ResourceTransaction<LedgerBackend> transaction(backend_, context_, budget_, 17);
  const BufferDesc request{.bytes = 300, .usage = BufferUsage::ProgramInput | BufferUsage::TransferTarget};
  ASSERT_TRUE(transaction.allocate(request).ok());
  ASSERT_EQ(backend_.permits_seen().size(), 1U);
  EXPECT_EQ(backend_.permits_seen()[0].desc, request);
  EXPECT_EQ(backend_.permits_seen()[0].transaction_id, 17U);
  EXPECT_EQ(transaction.id(), 17U);
  EXPECT_EQ(budget_.charged_bytes(), 300U);
  std::vector<Buffer> buffers = transaction.commit();
  EXPECT_EQ(buffers.size(), 1U);
}

TEST_F(TransactionTest, CommitHandsOutEveryStagedBuffer) {
  std::vector<BufferRef> refs;
  std::vector<Buffer> buffers;
  {
    ResourceTransaction<LedgerBackend> transaction(backend_, context_, budget_, 1);
    for (const std::uint64_t bytes : {100U, 200U, 300U}) {
      Result<BufferRef> ref = transaction.allocate(desc_of(bytes));
      ASSERT_TRUE(ref.ok()) << describe_error(ref.error());
      refs.push_back(ref.value());
    }
    EXPECT_EQ(transaction.staged_count(), 3U);
    buffers = transaction.commit();
    EXPECT_EQ(transaction.staged_count(), 0U);
  }  // the destructor after commit must not roll anything back
  ASSERT_EQ(buffers.size(), refs.size());
  for (std::size_t index = 0; index < refs.size(); ++index) {
    EXPECT_EQ(buffers[index].ref(), refs[index]);
    EXPECT_TRUE(backend_.is_live(refs[index].id));
    EXPECT_EQ(backend_.free_calls(refs[index].id), 0U);
  }
  EXPECT_EQ(budget_.charged_bytes(), 600U);
}

TEST_F(TransactionTest, StagedWritesLandInTheStagedBuffer) {
  ResourceTransaction<LedgerBackend> transaction(backend_, context_, budget_, 2);
  const BufferRef ref = transaction.allocate(desc_of(4)).value();
  const std::array<std::byte, 4> data = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  const std::array<std::span<const std::byte>, 1> segments = {std::span<const std::byte>(data)};
  ASSERT_TRUE(transaction.write(ref, 0, ByteSource{segments}).ok());
  EXPECT_EQ(backend_.bytes_of(ref.id)[2], std::byte{3});

  const Status foreign = transaction.write(BufferRef{999, 1}, 0, ByteSource{segments});
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.error().kind, ErrorKind::InvalidArgument);
  (void)transaction.commit();
}

TEST_F(TransactionTest, RollbackFreesEverythingStagedAndDischargesTheBudget) {
  ResourceTransaction<LedgerBackend> transaction(backend_, context_, budget_, 3);
  std::vector<BufferRef> refs;
  for (int index = 0; index < 3; ++index) refs.push_back(transaction.allocate(desc_of(128)).value());
  const RollbackReport report = transaction.rollback();
  EXPECT_EQ(report.released, 3U);
  EXPECT_EQ(report.quarantined, 0U);
  EXPECT_TRUE(report.still_live.empty());
  EXPECT_EQ(backend_.live_buffers(), 0U);
  EXPECT_EQ(budget_.charged_bytes(), 0U);
  for (const BufferRef ref : refs) EXPECT_EQ(backend_.free_calls(ref.id), 1U);
}

TEST_F(TransactionTest, DestructionWithoutCommitRollsBack) {
  {
    ResourceTransaction<LedgerBackend> transaction(backend_, context_, budget_, 4);
    ASSERT_TRUE(transaction.allocate(desc_of(64)).ok());
    ASSERT_TRUE(transaction.allocate(desc_of(64)).ok());
    EXPECT_EQ(backend_.live_buffers(), 2U);
  }
  EXPECT_EQ(backend_.live_buffers(), 0U);
  EXPECT_EQ(budget_.charged_bytes(), 0U);
}

TEST_F(TransactionTest, RollbackRetriesARejectedFreeUntilItIsReleased) {
  ResourceTransaction<LedgerBackend> transaction(backend_, context_, budget_, 5);
  const BufferRef ref = transaction.allocate(desc_of(256)).value();
  backend_.script_free(ref.id, {.rejections = ResourceTransaction<LedgerBackend>::kReleaseAttemptsMax - 1});
  const RollbackReport report = transaction.rollback();
  EXPECT_EQ(report.released, 1U);
  EXPECT_TRUE(report.still_live.empty());
  EXPECT_EQ(backend_.free_calls(ref.id), ResourceTransaction<LedgerBackend>::kReleaseAttemptsMax);
  EXPECT_FALSE(backend_.is_live(ref.id));
  EXPECT_EQ(budget_.charged_bytes(), 0U);
}

TEST_F(TransactionTest, RollbackGivesUpAfterTheBoundAndHandsTheLiveBufferBack) {
  ResourceTransaction<LedgerBackend> transaction(backend_, context_, budget_, 6);
  const BufferRef stubborn = transaction.allocate(desc_of(256)).value();
  const BufferRef plain = transaction.allocate(desc_of(100)).value();
  backend_.script_free(stubborn.id, {.rejections = 1000});
  const RollbackReport report = transaction.rollback();
  EXPECT_EQ(report.released, 1U);
  ASSERT_EQ(report.still_live.size(), 1U);
  EXPECT_EQ(report.still_live[0].ref(), stubborn);  // the same live handle, not a copy or a new one
  EXPECT_EQ(backend_.free_calls(stubborn.id), ResourceTransaction<LedgerBackend>::kReleaseAttemptsMax);
  EXPECT_TRUE(backend_.is_live(stubborn.id));
  EXPECT_FALSE(backend_.is_live(plain.id));
  EXPECT_EQ(budget_.charged_bytes(), 256U);  // still live, still charged: the caller owns it again
}

TEST_F(TransactionTest, RollbackQuarantinesAnIndeterminateFreeAndNeverRetriesIt) {
  ResourceTransaction<LedgerBackend> transaction(backend_, context_, budget_, 7);
  const BufferRef lost = transaction.allocate(desc_of(512)).value();
  const BufferRef plain = transaction.allocate(desc_of(64)).value();
  backend_.script_free(lost.id, {.indeterminate = true});
  const RollbackReport report = transaction.rollback();
  EXPECT_EQ(report.quarantined, 1U);
  EXPECT_EQ(report.quarantined_bytes, 512U);
  EXPECT_EQ(report.released, 1U);
  EXPECT_TRUE(report.still_live.empty());
  EXPECT_EQ(backend_.free_calls(lost.id), 1U);
  EXPECT_EQ(backend_.free_calls(plain.id), 1U);
  EXPECT_EQ(budget_.quarantined_bytes(), 512U);
  EXPECT_EQ(budget_.charged_bytes(), 0U);
}

TEST_F(TransactionTest, BudgetRefusalIsRetryableAndNeverReachesTheBackend) {
  ResourceTransaction<LedgerBackend> transaction(backend_, context_, budget_, 8);
  ASSERT_TRUE(transaction.allocate(desc_of(4000)).ok());
  const Result<BufferRef> refused = transaction.allocate(desc_of(200));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::OutOfMemory);
  EXPECT_TRUE(refused.error().retryable);
  EXPECT_EQ(backend_.permits_seen().size(), 1U);
  EXPECT_EQ(transaction.staged_count(), 1U);
  EXPECT_EQ(budget_.charged_bytes(), 4000U);
}

TEST_F(TransactionTest, BackendAllocationFailureDischargesTheBudget) {
  ResourceTransaction<LedgerBackend> transaction(backend_, context_, budget_, 9);
  backend_.fail_next_allocation(ErrorKind::OutOfMemory);
  const Result<BufferRef> failed = transaction.allocate(desc_of(1000));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, ErrorKind::OutOfMemory);
  EXPECT_EQ(budget_.charged_bytes(), 0U);
  EXPECT_EQ(transaction.staged_count(), 0U);
  EXPECT_TRUE(transaction.allocate(desc_of(1000)).ok());  // the retry is admitted
}

TEST_F(TransactionTest, ZeroByteRequestIsRefusedBeforeAdmission) {
  ResourceTransaction<LedgerBackend> transaction(backend_, context_, budget_, 10);
  const Result<BufferRef> refused = transaction.allocate(desc_of(0));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::InvalidArgument);
  EXPECT_TRUE(backend_.permits_seen().empty());
  EXPECT_EQ(budget_.charged_bytes(), 0U);
}

}  // namespace
}  // namespace quiesce
