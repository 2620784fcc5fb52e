print("emojiart-sync")
